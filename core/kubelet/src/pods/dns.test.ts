import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@skiff/api';
import { boundPod } from '../test-support/objects.js';
import { parseResolvConf, PodDns } from './dns.js';

let dir: string;
let resolvConf: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-dns-'));
  resolvConf = join(dir, 'resolv.conf');
  await writeFile(resolvConf, '# host\nnameserver 192.168.0.1\nnameserver 192.168.0.2 ; second\nsearch example.com. lan\noptions edns0 ndots:1\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const withCluster = () => new PodDns({ clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf });
const withoutCluster = () => new PodDns({ clusterDNS: [], clusterDomain: 'cluster.local', resolvConf });
const pod = (spec: Partial<Pod['spec']> = {}) => boundPod('web-1', spec);

describe('pod DNS', () => {
  it('reads a resolv.conf', () => {
    expect(parseResolvConf('nameserver 1.1.1.1\nsearch a.b. c\nsearch d\noptions rotate\n# nameserver 9.9.9.9\n')).toEqual({
      servers: ['1.1.1.1'],
      searches: ['d'],
      options: ['rotate'],
    });
  });

  it('ClusterFirst: the cluster DNS, the namespace search paths before the node ones, ndots:5', async () => {
    expect(await withCluster().configFor(pod())).toEqual({
      config: {
        servers: ['10.96.0.10'],
        searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'example.com', 'lan'],
        options: ['ndots:5'],
      },
      warnings: [],
    });
    expect((await withCluster().configFor(pod({ dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true }))).config.servers).toEqual(['10.96.0.10']);
  });

  it("Default, and ClusterFirst on the host network: the node's resolv.conf", async () => {
    const host = { servers: ['192.168.0.1', '192.168.0.2'], searches: ['example.com', 'lan'], options: ['edns0', 'ndots:1'] };
    expect((await withCluster().configFor(pod({ dnsPolicy: 'Default' }))).config).toEqual(host);
    expect((await withCluster().configFor(pod({ hostNetwork: true }))).config).toEqual(host);
  });

  it("ClusterFirst without cluster DNS falls back to the node's resolv.conf, with a MissingClusterDNS warning", async () => {
    expect(await withoutCluster().configFor(pod())).toEqual({
      config: { servers: ['192.168.0.1', '192.168.0.2'], searches: ['example.com', 'lan'], options: ['edns0', 'ndots:1'] },
      warnings: [
        [
          'MissingClusterDNS',
          'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
        ],
      ],
    });
  });

  it("None takes only the pod's dnsConfig; dnsConfig is appended to the others, options by name", async () => {
    const dnsConfig = { nameservers: ['1.1.1.1'], searches: ['my.dns.search.suffix'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] };
    expect((await withCluster().configFor(pod({ dnsPolicy: 'None', dnsConfig }))).config).toEqual({
      servers: ['1.1.1.1'],
      searches: ['my.dns.search.suffix'],
      options: ['ndots:2', 'edns0'],
    });
    expect((await withCluster().configFor(pod({ dnsConfig }))).config).toEqual({
      servers: ['10.96.0.10', '1.1.1.1'],
      searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'example.com', 'lan', 'my.dns.search.suffix'],
      options: ['ndots:2', 'edns0'],
    });
  });

  it('keeps to 3 nameservers and 32 search paths, saying what it applied', async () => {
    const many = await withCluster().configFor(
      pod({
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['1.0.0.1', '1.0.0.2', '1.0.0.3', '1.0.0.4'], searches: Array.from({ length: 40 }, (_, i) => `s${i}`) },
      }),
    );
    expect(many.config.servers).toEqual(['1.0.0.1', '1.0.0.2', '1.0.0.3']);
    expect(many.config.searches).toHaveLength(32);
    expect(many.warnings.map(([reason, message]) => `${reason}: ${message.split(':')[0]}`)).toEqual([
      'DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is',
      'DNSConfigForming: Search Line limits were exceeded, some search paths have been omitted, the applied search line is',
    ]);
  });
});
