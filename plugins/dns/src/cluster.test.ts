import { Resolver } from 'node:dns/promises';
import { isApiError, RESOURCES, type Endpoint, type EndpointSlice, type Pod, type Service } from '@skiff/api';
import { startTestCluster, waitFor, type TestCluster } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, { dnsServerOf } from './index.js';
import { decode, framed, queryPacket, tcpExchange, TestUpstream, udpExchange, udpQuery } from './test-support.js';

const NS = 'default';
const fqdn = (service: string, namespace = NS) => `${service}.${namespace}.svc.cluster.local`;

function service(name: string, spec: Service['spec']): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec };
}

function slice(
  name: string,
  serviceName: string,
  addressType: 'IPv4' | 'IPv6',
  endpoints: Endpoint[],
  ports = [{ name: 'peer', port: 7000, protocol: 'TCP' }],
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: NS, labels: { 'kubernetes.io/service-name': serviceName, 'endpointslice.kubernetes.io/managed-by': 'dns-test' } },
    addressType,
    endpoints,
    ports,
  };
}

describe('cluster DNS in a whole cluster (dev preset), asked over real UDP and TCP', () => {
  let cluster: TestCluster;
  let upstream: TestUpstream;
  let port: number;
  let resolver: Resolver;
  let webIP: string;

  beforeAll(async () => {
    upstream = await new TestUpstream({
      'www.example.test': { answers: [{ name: 'www.example.test', type: 'A', ttl: 60, class: 'IN', data: '192.0.2.80' }] },
    }).start();
    cluster = await startTestCluster({ plugins: [[plugin, { upstream: [`127.0.0.1:${upstream.port}`], upstreamTimeoutMs: 500 }]] });
    port = dnsServerOf(cluster.kernel)!.port;
    resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    const web = await cluster.client.create<Service>(RESOURCES.services, service('web', { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }), NS);
    webIP = web.spec!.clusterIP!;
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await upstream?.stop();
  });

  it('publishes itself: Service kube-system/kube-dns at 10.96.0.10 without a selector, and its EndpointSlice', async () => {
    const kubeDns = await cluster.client.get<Service>(RESOURCES.services, 'kube-dns', 'kube-system');
    expect(kubeDns.metadata.labels).toMatchObject({ 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'SkiffDNS' });
    expect(kubeDns.spec?.clusterIP).toBe('10.96.0.10');
    expect(kubeDns.spec?.selector).toBeUndefined();
    expect(kubeDns.spec?.ports).toMatchObject([
      { name: 'dns', port: 53, protocol: 'UDP', targetPort: port },
      { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: port },
    ]);
    const slice = await cluster.client.get<EndpointSlice>(RESOURCES.endpointslices, 'kube-dns-skiff', 'kube-system');
    expect(slice.metadata.labels).toMatchObject({ 'kubernetes.io/service-name': 'kube-dns', 'endpointslice.kubernetes.io/managed-by': 'skiff-dns' });
    expect(slice.addressType).toBe('IPv4');
    expect(slice.endpoints).toMatchObject([{ addresses: ['127.0.0.1'], conditions: { ready: true, serving: true } }]);
    expect(slice.ports).toEqual([
      { name: 'dns', port, protocol: 'UDP' },
      { name: 'dns-tcp', port, protocol: 'TCP' },
    ]);
    expect(await resolver.resolve4(fqdn('kube-dns', 'kube-system'))).toEqual(['10.96.0.10']);
  });

  it('a ClusterIP Service: A, SRV of its named port, PTR of its address; authoritative', async () => {
    expect(await resolver.resolve4(fqdn('web'))).toEqual([webIP]);
    expect(await resolver.resolveSrv(`_http._tcp.${fqdn('web')}`)).toEqual([{ name: fqdn('web'), port: 80, priority: 0, weight: 100 }]);
    expect(await resolver.reverse(webIP)).toEqual([fqdn('web')]);
    const raw = await udpQuery(port, fqdn('web'), 'A');
    expect(raw.flag_aa).toBe(true);
    expect(raw.answers).toMatchObject([{ type: 'A', ttl: 5, data: webIP }]);
  });

  it('NXDOMAIN for names that do not exist (search-path misses too), NODATA for names without the type; SOA in authority', async () => {
    for (const name of [fqdn('nope'), `${fqdn('web')}.${NS}.svc.cluster.local`, 'a.b.c.d.e.svc.cluster.local', 'nothing.cluster.local']) {
      const answer = await udpQuery(port, name, 'A');
      expect(answer.rcode, name).toBe('NXDOMAIN');
      expect(answer.flag_aa).toBe(true);
      expect(answer.authorities).toMatchObject([{ type: 'SOA', name: 'cluster.local', data: { mname: 'ns.dns.cluster.local', minimum: 5 } }]);
    }
    await expect(resolver.resolve4(fqdn('nope'))).rejects.toMatchObject({ code: 'ENOTFOUND' });
    for (const [name, type] of [
      [fqdn('web'), 'AAAA'],
      [`${NS}.svc.cluster.local`, 'A'],
      ['svc.cluster.local', 'A'],
    ] as const) {
      const answer = await udpQuery(port, name, type);
      expect(answer.rcode, name).toBe('NOERROR');
      expect(answer.answers).toEqual([]);
      expect(answer.authorities).toMatchObject([{ type: 'SOA' }]);
    }
    expect((await udpQuery(port, 'cluster.local', 'SOA')).answers).toMatchObject([{ type: 'SOA', name: 'cluster.local' }]);
    expect((await udpQuery(port, 'cluster.local', 'NS')).answers).toMatchObject([{ type: 'NS', data: 'ns.dns.cluster.local' }]);
  });

  it('dns-version TXT and pod names (the address the name spells)', async () => {
    expect(await resolver.resolveTxt('dns-version.cluster.local')).toEqual([['1.1.0']]);
    expect(await resolver.resolve4(`10-244-0-5.${NS}.pod.cluster.local`)).toEqual(['10.244.0.5']);
    expect(await resolver.resolve6(`fd00-10--5.${NS}.pod.cluster.local`)).toEqual(['fd00:10::5']);
    expect((await udpQuery(port, `not-an-ip.${NS}.pod.cluster.local`, 'A')).rcode).toBe('NXDOMAIN');
  });

  it('a headless Service: ready endpoints, hostnames, SRV per endpoint with the targets in the additional section, PTR of hostnames', async () => {
    await cluster.client.create(RESOURCES.services, service('db', { clusterIP: 'None', ports: [{ name: 'peer', port: 7000 }] }), NS);
    await cluster.client.create(
      RESOURCES.endpointslices,
      slice('db-v4', 'db', 'IPv4', [
        { addresses: ['10.244.9.1'], hostname: 'db-0', conditions: { ready: true } },
        { addresses: ['10.244.9.2'], conditions: { ready: true } },
        { addresses: ['10.244.9.3'], hostname: 'db-2', conditions: { ready: false } },
      ]),
      NS,
    );
    await cluster.client.create(RESOURCES.endpointslices, slice('db-v6', 'db', 'IPv6', [{ addresses: ['fd00::9:1'], hostname: 'db-0' }]), NS);
    const addresses = await waitFor('the headless Service in DNS', async () => {
      const found = await resolver.resolve4(fqdn('db')).catch(() => []);
      return found.length === 2 ? found.sort() : undefined;
    });
    expect(addresses).toEqual(['10.244.9.1', '10.244.9.2']);
    expect(await resolver.resolve6(fqdn('db'))).toEqual(['fd00::9:1']);
    expect(await resolver.resolve4(`db-0.${fqdn('db')}`)).toEqual(['10.244.9.1']);
    expect(await resolver.resolve6(`db-0.${fqdn('db')}`)).toEqual(['fd00::9:1']);
    expect(await resolver.resolve4(`10-244-9-2.${fqdn('db')}`)).toEqual(['10.244.9.2']);
    expect((await udpQuery(port, `db-2.${fqdn('db')}`, 'A')).rcode).toBe('NXDOMAIN');
    const srv = await udpQuery(port, `_peer._tcp.${fqdn('db')}`, 'SRV');
    expect(srv.answers!.map((answer) => (answer.data as { target: string }).target).sort()).toEqual([`10-244-9-2.${fqdn('db')}`, `db-0.${fqdn('db')}`]);
    expect(srv.answers![0]).toMatchObject({ data: { priority: 0, weight: 100, port: 7000 } });
    expect(srv.additionals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: `db-0.${fqdn('db')}`, type: 'A', data: '10.244.9.1' }),
        expect.objectContaining({ name: `10-244-9-2.${fqdn('db')}`, type: 'A', data: '10.244.9.2' }),
        expect.objectContaining({ name: `db-0.${fqdn('db')}`, type: 'AAAA', data: 'fd00::9:1' }),
      ]),
    );
    expect(await resolver.reverse('10.244.9.1')).toEqual([`db-0.${fqdn('db')}`]);
    expect(await resolver.reverse('fd00::9:1')).toEqual([`db-0.${fqdn('db')}`]);

    // publishNotReadyAddresses: every endpoint.
    const stored = await cluster.client.get<Service>(RESOURCES.services, 'db', NS);
    await cluster.client.update(RESOURCES.services, { ...stored, spec: { ...stored.spec, publishNotReadyAddresses: true } });
    await waitFor('the not-ready endpoint', async () => (await resolver.resolve4(`db-2.${fqdn('db')}`).catch(() => [])).length === 1);
  });

  it('follows changes: a new endpoint appears, a deleted Service is gone', async () => {
    await cluster.client.create(RESOURCES.services, service('cache', { clusterIP: 'None' }), NS);
    const created = await cluster.client.create<EndpointSlice>(
      RESOURCES.endpointslices,
      slice('cache-1', 'cache', 'IPv4', [{ addresses: ['10.244.8.1'], conditions: { ready: true } }]),
      NS,
    );
    await waitFor('the first endpoint', async () => (await resolver.resolve4(fqdn('cache')).catch(() => [])).length === 1, { timeoutMs: 3000 });
    await cluster.client.update(RESOURCES.endpointslices, {
      ...created,
      endpoints: [...created.endpoints!, { addresses: ['10.244.8.2'], conditions: { ready: true } }],
    });
    await waitFor('the second endpoint', async () => (await resolver.resolve4(fqdn('cache')).catch(() => [])).length === 2, { timeoutMs: 3000 });
    await cluster.client.delete(RESOURCES.services, 'cache', NS);
    await waitFor('NXDOMAIN after the delete', async () => (await udpQuery(port, fqdn('cache'), 'A')).rcode === 'NXDOMAIN', { timeoutMs: 3000 });
  });

  it('ExternalName: CNAME, followed inside the cluster domain, and resolved upstream outside it', async () => {
    await cluster.client.create(RESOURCES.services, service('alias', { type: 'ExternalName', externalName: fqdn('web') }), NS);
    await cluster.client.create(RESOURCES.services, service('outside', { type: 'ExternalName', externalName: 'WWW.example.test.' }), NS);
    const alias = await waitFor('the in-cluster alias', async () => {
      const answer = await udpQuery(port, fqdn('alias'), 'A');
      return answer.answers!.length ? answer : undefined;
    });
    expect(alias.answers).toMatchObject([
      { type: 'CNAME', name: fqdn('alias'), data: fqdn('web') },
      { type: 'A', name: fqdn('web'), data: webIP },
    ]);
    expect(await resolver.resolveCname(fqdn('outside'))).toEqual(['www.example.test']);
    const outside = await udpQuery(port, fqdn('outside'), 'A');
    expect(outside.answers).toMatchObject([
      { type: 'CNAME', data: 'www.example.test' },
      { type: 'A', name: 'www.example.test', data: '192.0.2.80' },
    ]);
    expect(await resolver.resolve4(fqdn('outside'))).toEqual(['192.0.2.80']);
  });

  it('forwards names outside the cluster (to the test upstream only)', async () => {
    expect(await resolver.resolve4('www.example.test')).toEqual(['192.0.2.80']);
    // Reverse names the cluster does not know go upstream too (the test upstream has none: NXDOMAIN).
    await expect(resolver.reverse('192.0.2.99')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(upstream.count('99.2.0.192.in-addr.arpa')).toBe(1);
  });

  it('TCP: several queries on one connection; a large answer is truncated over UDP and whole over TCP and with EDNS0', async () => {
    const endpoints = Array.from({ length: 60 }, (_, i) => ({ addresses: [`10.244.7.${i + 1}`], conditions: { ready: true } }));
    await cluster.client.create(RESOURCES.services, service('big', { clusterIP: 'None' }), NS);
    await cluster.client.create(RESOURCES.endpointslices, slice('big-1', 'big', 'IPv4', endpoints), NS);
    await waitFor('the large headless Service', async () => (await udpQuery(port, fqdn('big'), 'A', { udpSize: 4096 })).answers!.length === 60);

    const udp = await udpQuery(port, fqdn('big'), 'A', { id: 99 });
    expect(udp.id).toBe(99);
    expect(udp.flag_tc).toBe(true);
    expect(udp.answers).toEqual([]);
    const { answers, closed } = await tcpExchange(
      port,
      Buffer.concat([framed(queryPacket(fqdn('big'), 'A', { id: 1 })), framed(queryPacket(fqdn('web'), 'A', { id: 2 }))]),
      2,
    );
    expect(closed).toBe(false);
    const [first, second] = answers.map((answer) => decode(answer));
    expect(first).toMatchObject({ id: 1, flag_tc: false });
    expect(first!.answers).toHaveLength(60);
    expect(second).toMatchObject({ id: 2, answers: [{ data: webIP }] });
    // Node's resolver retries over TCP on TC.
    expect(await resolver.resolve4(fqdn('big'))).toHaveLength(60);
  });

  it('malformed input: dropped over UDP, the connection closed over TCP; other classes REFUSED', async () => {
    expect(await udpExchange(port, Buffer.from([1, 2, 3]), 300)).toBeUndefined();
    const bad = Buffer.from(queryPacket(fqdn('web'), 'A'));
    bad[12] = 0xc0; // a compression pointer where the question name starts
    expect(await udpExchange(port, bad, 300)).toBeUndefined();
    const { answers, closed } = await tcpExchange(port, Buffer.concat([framed(queryPacket(fqdn('web'), 'A', { id: 5 })), framed(Buffer.from('garbage!'))]), 2);
    expect(answers.map((answer) => decode(answer).id)).toEqual([5]);
    expect(closed).toBe(true);
    expect((await udpQuery(port, 'version.bind', 'TXT', { klass: 'CH' })).rcode).toBe('REFUSED');
    expect(await resolver.resolve4(fqdn('web'))).toEqual([webIP]);
  });

  it('StatefulSet pods: <pod>.<service> names from the EndpointSlice controller', async () => {
    await cluster.client.create(
      RESOURCES.services,
      service('sts', { clusterIP: 'None', selector: { app: 'sts' }, ports: [{ name: 'web', port: 8080, targetPort: 8080 }] }),
      NS,
    );
    await cluster.client.create(
      RESOURCES.statefulsets,
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'sts', namespace: NS },
        spec: {
          serviceName: 'sts',
          replicas: 2,
          selector: { matchLabels: { app: 'sts' } },
          template: { metadata: { labels: { app: 'sts' } }, spec: { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 8080 }] }] } },
        },
      },
      NS,
    );
    const pod = await waitFor(
      'pod sts-0 running with an IP',
      async () => {
        const found = await cluster.client
          .get<Pod>(RESOURCES.pods, 'sts-0', NS)
          .catch((err) => (isApiError(err, 'NotFound') ? undefined : Promise.reject(err)));
        return found?.status?.podIP && found.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? found : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const name = `sts-0.${fqdn('sts')}`;
    expect(await waitFor(name, async () => resolver.resolve4(name).catch(() => undefined), { timeoutMs: 10_000 })).toEqual([pod.status!.podIP]);
    const srv = await waitFor(
      'both pods in SRV',
      async () => {
        const found = await resolver.resolveSrv(`_web._tcp.${fqdn('sts')}`).catch(() => []);
        return found.length === 2 ? found : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(srv.map((record) => record.name).sort()).toEqual([`sts-0.${fqdn('sts')}`, `sts-1.${fqdn('sts')}`]);
  }, 60_000);

  it('the EndpointSlice controller leaves the selector-less kube-dns Service and its slice (another manager) alone', async () => {
    const slices = await cluster.client.list<EndpointSlice>(RESOURCES.endpointslices, 'kube-system', { labelSelector: 'kubernetes.io/service-name=kube-dns' });
    expect(
      slices.items.map((item) => [item.metadata.name, item.metadata.labels?.['endpointslice.kubernetes.io/managed-by'], item.metadata.generation]),
    ).toEqual([['kube-dns-skiff', 'skiff-dns', 1]]);
  });
});
