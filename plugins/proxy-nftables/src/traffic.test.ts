import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import type { LogRecord, ServiceProxy } from '@skiff/kernel';
import { CLIENT_IP, isRoot, Lab, NODE_IP, POD_GATEWAY, TCP_PORT, UDP_PORT } from './test-support/lab.js';
import { proxyFactory, publish, replaceSlice, serviceObject, sliceObject, startProxy, type TestPort } from './test-support/proxy.js';

// Real traffic through real rules: the proxy loads its table into a "node" network namespace; endpoints are
// namespaces on a bridge in it (the pod subnet 10.244.1.0/24) running a small TCP/UDP server that answers
// "<its name> <the peer address it sees>"; clients are a namespace routed through the node, or the endpoints.

if (!isRoot) console.log('traffic.test.ts skipped: network namespaces and nftables need root');

const TABLE = 'skiff-proxy-test';
const WEB: TestPort[] = [{ name: 'http', port: 80, targetPort: TCP_PORT }];
const DNS: TestPort[] = [{ name: 'dns', protocol: 'UDP', port: 53, targetPort: UDP_PORT }];

const lab = new Lab();
let plane: ControlPlane;
let proxy: ServiceProxy | undefined;
const records: LogRecord[] = [];
const endpoints: Record<string, string> = {};
const factory = () => proxyFactory({ netns: lab.node, table: TABLE, serviceCIDRs: ['10.96.0.0/16'], minSyncIntervalMs: 10, fullSyncSeconds: 0 });

const table = () => {
  try {
    return lab.in(lab.node, ['nft', 'list', 'table', 'ip', TABLE]);
  } catch {
    return '';
  }
};
const names = (answers: { answer?: string }[]) => answers.map((a) => a.answer?.split(' ')[0]);
const untilRule = (what: string, text: string) => waitFor(what, () => table().includes(text));

beforeAll(async () => {
  if (!isRoot) return;
  lab.setUp();
  for (const name of ['e1', 'e2', 'e3']) endpoints[name] = await lab.addEndpoint(name);
  plane = await startControlPlane([], { enabled: [], config: { logLevel: 'silent' } });
  proxy = await startProxy(factory(), plane.client, { name: 'node-1', ips: [NODE_IP] }, records);
  await proxy.synced?.();
}, 60_000);

afterAll(async () => {
  await proxy?.close().catch(() => undefined);
  await plane?.stop();
  await lab.cleanup();
});

describe.skipIf(!isRoot)('nftables service proxy: real traffic', () => {
  it('a ClusterIP reaches its endpoints, spread over all of them, masqueraded for clients outside the pod range', async () => {
    const eps = ['e1', 'e2', 'e3'].map((n) => ({ ip: endpoints[n]!, node: 'node-1' }));
    await publish(plane.client, serviceObject('spread', '10.96.0.10', WEB), sliceObject('spread', WEB, eps));
    await untilRule('the spread Service', '10.96.0.10 . tcp . 80 : goto svc-');
    const answers = await lab.request({ host: '10.96.0.10', port: 80, count: 40 });
    expect(answers.every((a) => a.answer)).toBe(true);
    expect(new Set(names(answers))).toEqual(new Set(['e1', 'e2', 'e3']));
    // The client is outside the pod range: the endpoint sees the node's bridge address, so its reply returns through the node.
    expect(new Set(answers.map((a) => a.answer!.split(' ')[1]))).toEqual(new Set([POD_GATEWAY]));
  });

  it('ClientIP affinity keeps a client on one endpoint', async () => {
    const eps = ['e1', 'e2', 'e3'].map((n) => ({ ip: endpoints[n]! }));
    await publish(
      plane.client,
      serviceObject('sticky', '10.96.0.11', WEB, { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 300 } } }),
      sliceObject('sticky', WEB, eps),
    );
    await untilRule('the sticky Service', '10.96.0.11 . tcp . 80 : goto svc-');
    expect(table()).toContain('timeout 5m');
    const answers = await lab.request({ host: '10.96.0.11', port: 80, count: 20 });
    expect(answers.every((a) => a.answer)).toBe(true);
    expect(new Set(names(answers)).size).toBe(1);
  });

  it('refuses at once: a Service without endpoints (ClusterIP and NodePort), a port its ClusterIP does not serve, an address no Service holds', async () => {
    const ports = [{ ...WEB[0]!, nodePort: 30083 }];
    await publish(plane.client, serviceObject('empty', '10.96.0.12', ports, { type: 'NodePort' }), sliceObject('empty', ports, []));
    await untilRule('the empty Service', '10.96.0.12 . tcp . 80 : goto reject-chain');
    const [empty] = await lab.request({ host: '10.96.0.12', port: 80 });
    expect(empty!.error).toBe('ECONNREFUSED');
    const [nodePort] = await lab.request({ host: NODE_IP, port: 30083 });
    expect(nodePort!.error).toBe('ECONNREFUSED');
    const [port] = await lab.request({ host: '10.96.0.10', port: 81 });
    expect(port!.error).toBe('ECONNREFUSED');
    // Without the rule this address would leave by the node's default route and the connect would time out.
    const [unheld] = await lab.request({ host: '10.96.0.250', port: 80 });
    expect(unheld!.error).toBe('ECONNREFUSED');
  });

  it('refuses every time, before routing: with an unreachable route for the service range, repeated connects are all refused', async () => {
    const ports = [{ ...WEB[0]! }];
    await publish(plane.client, serviceObject('gone', '10.96.0.13', ports), sliceObject('gone', ports, []));
    await untilRule('the endpoint-less Service', '10.96.0.13 . tcp . 80 : goto reject-chain');
    // The routing decision would answer first with ICMP errors, which the kernel rate-limits: after a burst the SYNs
    // would be dropped and retried a second later. Refused in prerouting, with a reset, none of them waits.
    lab.in(lab.node, ['ip', 'route', 'add', 'unreachable', '10.96.0.0/16']);
    try {
      for (const host of ['10.96.0.13', '10.96.0.251']) {
        const answers = await lab.request({ host, port: 80, count: 20, timeoutMs: 900 });
        expect({ host, errors: [...new Set(answers.map((a) => a.error))] }).toEqual({ host, errors: ['ECONNREFUSED'] });
      }
    } finally {
      lab.in(lab.node, ['ip', 'route', 'del', 'unreachable', '10.96.0.0/16']);
    }
  });

  it('a NodePort answers on the node IP, from outside and from the node itself', async () => {
    const ports = [{ ...WEB[0]!, nodePort: 30080 }];
    await publish(plane.client, serviceObject('nodeport', '10.96.0.13', ports, { type: 'NodePort' }), sliceObject('nodeport', ports, [{ ip: endpoints.e2! }]));
    await untilRule('the NodePort Service', 'tcp . 30080 : goto ext-');
    const [outside] = await lab.request({ host: NODE_IP, port: 30080 });
    expect(outside!.answer).toMatch(/^e2 /);
    const [local] = await lab.request({ host: NODE_IP, port: 30080 }, lab.node);
    expect(local!.answer).toMatch(/^e2 /);
  });

  it('externalTrafficPolicy Local: external traffic reaches only local endpoints, with the client address kept; none local → dropped', async () => {
    const ports = [{ ...WEB[0]!, nodePort: 30081 }];
    const eps = [
      { ip: endpoints.e1!, node: 'node-1' },
      { ip: endpoints.e2!, node: 'node-2' },
      { ip: endpoints.e3!, node: 'node-2' },
    ];
    await publish(
      plane.client,
      serviceObject('local', '10.96.0.14', ports, { type: 'NodePort', externalTrafficPolicy: 'Local' }),
      sliceObject('local', ports, eps),
    );
    await untilRule('the Local Service', 'tcp . 30081 : goto ext-');
    const answers = await lab.request({ host: NODE_IP, port: 30081, count: 12 });
    expect(answers.map((a) => a.answer)).toEqual(Array(12).fill(`e1 ${CLIENT_IP}`));
    // The ClusterIP still spreads over every endpoint.
    expect(new Set(names(await lab.request({ host: '10.96.0.14', port: 80, count: 30 }))).size).toBe(3);

    const remote = [{ ...WEB[0]!, nodePort: 30082 }];
    await publish(
      plane.client,
      serviceObject('remote', '10.96.0.15', remote, { type: 'NodePort', externalTrafficPolicy: 'Local' }),
      sliceObject('remote', remote, [{ ip: endpoints.e2!, node: 'node-2' }]),
    );
    await untilRule('the remote-only Service', 'tcp . 30082 : goto ext-');
    const [dropped] = await lab.request({ host: NODE_IP, port: 30082, timeoutMs: 1000 });
    expect(dropped!.error).toBe('ETIMEDOUT');
  });

  it('hairpin: an endpoint reaching itself through its Service is masqueraded; a neighbour on the bridge is not', async () => {
    await publish(plane.client, serviceObject('hairpin', '10.96.0.16', WEB), sliceObject('hairpin', WEB, [{ ip: endpoints.e1! }]));
    await untilRule('the hairpin Service', '10.96.0.16 . tcp . 80 : goto svc-');
    const [self] = await lab.request({ host: '10.96.0.16', port: 80 }, lab.endpointNamespace(endpoints.e1!));
    expect(self!.answer).toBe(`e1 ${POD_GATEWAY}`);
    // e2's reply to e2 is bridged, not routed: it meets the nat hooks only with bridge-nf-call-iptables.
    const [neighbour] = await lab.request({ host: '10.96.0.16', port: 80 }, lab.endpointNamespace(endpoints.e2!));
    expect(neighbour!.answer).toBe(`e1 ${endpoints.e2}`);
  });

  it('a changed EndpointSlice is applied incrementally; a removed UDP endpoint loses its conntrack flows', async () => {
    await publish(plane.client, serviceObject('dns', '10.96.0.17', DNS), sliceObject('dns', DNS, [{ ip: endpoints.e1! }]));
    await untilRule('the UDP Service', '10.96.0.17 . udp . 53 : goto svc-');
    const fixed = { protocol: 'udp' as const, host: '10.96.0.17', port: 53, sourcePort: 40053 };
    expect((await lab.request(fixed))[0]!.answer).toMatch(/^e1 /);
    const partialBefore = records.filter((r) => r.fields.kind === 'partial').length;
    await replaceSlice(plane.client, sliceObject('dns', DNS, [{ ip: endpoints.e2! }]));
    await untilRule('the new endpoint', `dnat to ${endpoints.e2}:${UDP_PORT}`);
    await waitFor('the conntrack cleanup', () => records.some((r) => r.fields.kind === 'partial' && Number(r.fields.conntrackDeletes) > 0));
    expect(records.filter((r) => r.fields.kind === 'partial').length).toBeGreaterThan(partialBefore);
    // Same client port, same flow: only the deleted conntrack entry lets it reach the new endpoint (e1 still answers).
    expect((await lab.request(fixed))[0]!.answer).toMatch(/^e2 /);
  });

  it('a transaction nft refuses is logged with its code, and a fresh full sync repairs the table', async () => {
    // Drift: someone removes the hairpin Service's chain, so the next incremental sync (which flushes it) fails.
    const chain = 'svc-default/hairpin/tcp/http';
    const fresh = () => records.filter((r) => r.fields.kind === 'fresh' && r.message === 'service rules synced').length;
    const freshBefore = fresh();
    lab.in(
      lab.node,
      ['nft', '-f', '-'],
      `delete element ip ${TABLE} service-ips { 10.96.0.16 . tcp . 80 }\nflush chain ip ${TABLE} ${chain}\ndelete chain ip ${TABLE} ${chain}\n`,
    );
    await replaceSlice(plane.client, sliceObject('hairpin', WEB, [{ ip: endpoints.e3! }]));
    await waitFor('the failure', () => records.find((r) => r.level === 'error' && (r.fields.err as { code?: string })?.code === 'SKIFF_ERR_PROXY_NFT_FAILED'));
    await waitFor('the repairing sync', () => fresh() > freshBefore, { timeoutMs: 15_000 });
    expect(lab.in(lab.node, ['nft', 'list', 'chain', 'ip', TABLE, chain])).toContain(`dnat to ${endpoints.e3}:${TCP_PORT}`);
    expect((await lab.request({ host: '10.96.0.16', port: 80 }))[0]).toMatchObject({ answer: expect.stringMatching(/^e3 /) });
  });

  it('close() removes the table; a table left by a killed process is replaced at the next create()', async () => {
    await proxy!.close();
    proxy = undefined;
    expect(table()).toBe('');
    // What a process killed with -9 leaves: the table with its rules, including some the new one would not write.
    lab.in(
      lab.node,
      ['nft', '-f', '-'],
      `add table ip ${TABLE}\nadd chain ip ${TABLE} svc-default/ghost/tcp/80\nadd rule ip ${TABLE} svc-default/ghost/tcp/80 counter\n`,
    );
    proxy = await startProxy(factory(), plane.client, { name: 'node-1', ips: [NODE_IP] }, records);
    await proxy.synced?.();
    expect(table()).not.toContain('ghost');
    expect(table()).toContain('10.96.0.10 . tcp . 80 : goto svc-');
    expect((await lab.request({ host: '10.96.0.10', port: 80 }))[0]!.answer).toBeDefined();
  });

  it('nodes of one host share the table: it stays until the last of them closes', async () => {
    const second = await startProxy(factory(), plane.client, { name: 'node-2', ips: ['192.168.77.1', '10.244.1.1'] }, records);
    await second.synced?.();
    // node-2 is local now: the Local Service's NodePort also reaches its endpoints, and it answers on node-2's addresses.
    await untilRule('node-2 addresses', '10.244.1.1');
    const answers = await lab.request({ host: NODE_IP, port: 30081, count: 30 });
    expect(new Set(names(answers))).toEqual(new Set(['e1', 'e2', 'e3']));
    await second.close();
    expect(table()).toContain('10.96.0.10 . tcp . 80 : goto svc-');
  });
});
