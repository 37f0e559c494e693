import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { servicePorts } from './model.js';
import { staleFlows } from './proxier.js';
import { ElementIndex, fullSyncScript, incrementalScript, serviceFragment, type Fragment, type RulesConfig } from './rules.js';
import { isRoot } from './test-support/lab.js';
import { serviceObject, sliceObject, type TestEndpoint, type TestPort } from './test-support/proxy.js';

const CONFIG: RulesConfig = { table: 'skiff-proxy', clusterCIDR: '10.244.0.0/16', masqueradeMark: 0x4000 };
const LOCAL = new Set(['node-1']);
const WEB: TestPort[] = [{ name: 'http', port: 80, targetPort: 8080 }];

function fragmentOf(spec: Record<string, unknown>, endpoints: TestEndpoint[], ports = WEB, clusterIP = '10.96.0.10'): Fragment {
  return serviceFragment(servicePorts(serviceObject('web', clusterIP, ports, spec), [sliceObject('web', ports, endpoints)]), LOCAL, CONFIG);
}
const elements = (fragment: Fragment) => fragment.elements.map((e) => `${e.container}: ${e.key}${e.value ? ` : ${e.value}` : ''}`);
const full = (...fragments: Fragment[]) => {
  const index = new ElementIndex();
  fragments.forEach((f, i) => index.replace(String(i), [], f.elements));
  return fullSyncScript(CONFIG, { fresh: true, nodeIPs: ['192.168.1.10'], serviceCIDRs: ['10.96.0.0/16'], fragments, elements: index.entries() });
};

/** Whether nft accepts the script (`nft -c`: parsed and checked by the kernel, not applied), in a scratch namespace. */
function nftAccepts(script: string): void {
  const namespace = `skp-check-${randomBytes(3).toString('hex')}`;
  execFileSync('ip', ['netns', 'add', namespace]);
  try {
    execFileSync('ip', ['netns', 'exec', namespace, 'nft', '-c', '-f', '-'], { input: script, stdio: ['pipe', 'pipe', 'pipe'] });
  } finally {
    execFileSync('ip', ['netns', 'delete', namespace]);
  }
}

describe('rules of one Service', () => {
  it('ClusterIP: ready endpoints only, random spreading through a numgen map, masquerade from outside the pod range', () => {
    const fragment = fragmentOf({}, [{ ip: '10.244.1.2' }, { ip: '10.244.1.3' }, { ip: '10.244.1.4', ready: false }]);
    expect(fragment.chains).toEqual(
      new Map([
        [
          'svc-default/web/tcp/http',
          [
            'ip daddr 10.96.0.10 ip saddr != 10.244.0.0/16 jump mark-for-masquerade',
            'meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.244.1.2 . 8080, 1 : 10.244.1.3 . 8080 }',
          ],
        ],
      ]),
    );
    expect(elements(fragment)).toEqual([
      'cluster-ips: 10.96.0.10',
      'hairpin-endpoints: 10.244.1.2 . 10.244.1.2',
      'hairpin-endpoints: 10.244.1.3 . 10.244.1.3',
      'service-ips: 10.96.0.10 . tcp . 80 : goto svc-default/web/tcp/http',
    ]);
  });

  it('no ready endpoint: the serving ones that terminate take over; none at all: reject on every address and the NodePort', () => {
    const terminating = fragmentOf({}, [
      { ip: '10.244.1.2', ready: false, serving: true, terminating: true },
      { ip: '10.244.1.3', ready: false },
    ]);
    expect(terminating.chains.get('svc-default/web/tcp/http')).toContain('meta l4proto tcp dnat to 10.244.1.2:8080');
    const ports = [{ ...WEB[0]!, nodePort: 30080 }];
    const none = fragmentOf({ type: 'NodePort', externalIPs: ['192.0.2.7'] }, [{ ip: '10.244.1.3', ready: false }], ports);
    expect(none.chains.size).toBe(0);
    expect(elements(none)).toEqual([
      'cluster-ips: 10.96.0.10',
      'no-endpoint-services: 10.96.0.10 . tcp . 80 : goto reject-chain',
      'no-endpoint-services: 192.0.2.7 . tcp . 80 : goto reject-chain',
      'no-endpoint-nodeports: tcp . 30080 : goto reject-chain',
    ]);
  });

  it('NodePort, external and load-balancer IPs go through the external chain, which masquerades', () => {
    const ports = [{ ...WEB[0]!, nodePort: 30080 }];
    const service = serviceObject('web', '10.96.0.10', ports, { type: 'LoadBalancer', externalIPs: ['192.0.2.7'] });
    service.status = { loadBalancer: { ingress: [{ ip: '192.0.2.8' }, { ip: '192.0.2.9', ipMode: 'Proxy' }] } };
    const fragment = serviceFragment(servicePorts(service, [sliceObject('web', ports, [{ ip: '10.244.1.2' }])]), LOCAL, CONFIG);
    expect(fragment.chains.get('ext-default/web/tcp/http')).toEqual(['jump mark-for-masquerade', 'goto svc-default/web/tcp/http']);
    expect(elements(fragment)).toEqual(
      expect.arrayContaining([
        'service-ips: 192.0.2.7 . tcp . 80 : goto ext-default/web/tcp/http',
        'service-ips: 192.0.2.8 . tcp . 80 : goto ext-default/web/tcp/http',
        'service-nodeports: tcp . 30080 : goto ext-default/web/tcp/http',
      ]),
    );
    expect(elements(fragment).join('\n')).not.toContain('192.0.2.9');
  });

  it('externalTrafficPolicy Local: external traffic to local endpoints unmasqueraded; pods and the host may use any; none local → drop', () => {
    const ports = [{ ...WEB[0]!, nodePort: 30080 }];
    const eps = [
      { ip: '10.244.1.2', node: 'node-1' },
      { ip: '10.244.2.2', node: 'node-2' },
    ];
    const fragment = fragmentOf({ type: 'NodePort', externalTrafficPolicy: 'Local' }, eps, ports);
    expect(fragment.chains.get('ext-default/web/tcp/http')).toEqual([
      'ip saddr 10.244.0.0/16 goto svc-default/web/tcp/http',
      'fib saddr type local jump mark-for-masquerade',
      'fib saddr type local goto svc-default/web/tcp/http',
      'goto svl-default/web/tcp/http',
    ]);
    expect(fragment.chains.get('svl-default/web/tcp/http')).toEqual(['meta l4proto tcp dnat to 10.244.1.2:8080']);
    expect(fragment.chains.get('svc-default/web/tcp/http')?.at(-1)).toContain('mod 2');
    const remoteOnly = fragmentOf({ type: 'NodePort', externalTrafficPolicy: 'Local' }, [eps[1]!], ports);
    expect(remoteOnly.chains.get('ext-default/web/tcp/http')?.at(-1)).toBe('drop');
  });

  it('internalTrafficPolicy Local: the ClusterIP leads to local endpoints only, or is dropped when there are none', () => {
    const local = fragmentOf({ internalTrafficPolicy: 'Local' }, [
      { ip: '10.244.1.2', node: 'node-1' },
      { ip: '10.244.2.2', node: 'node-2' },
    ]);
    expect([...local.chains.keys()]).toEqual(['svl-default/web/tcp/http']);
    expect(elements(local)).toContain('service-ips: 10.96.0.10 . tcp . 80 : goto svl-default/web/tcp/http');
    const none = fragmentOf({ internalTrafficPolicy: 'Local' }, [{ ip: '10.244.2.2', node: 'node-2' }]);
    expect(elements(none)).toContain('no-endpoint-services: 10.96.0.10 . tcp . 80 : drop');
  });

  it('ClientIP affinity: a timeout set and a chain per endpoint, checked before the random pick', () => {
    const fragment = fragmentOf({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }, [
      { ip: '10.244.1.2' },
      { ip: '10.244.1.3' },
    ]);
    expect(fragment.sets).toEqual(
      new Map([
        ['aff-default/web/tcp/http/10.244.1.2/8080', 60],
        ['aff-default/web/tcp/http/10.244.1.3/8080', 60],
      ]),
    );
    expect(fragment.chains.get('svc-default/web/tcp/http')).toEqual([
      'ip daddr 10.96.0.10 ip saddr != 10.244.0.0/16 jump mark-for-masquerade',
      'ip saddr @aff-default/web/tcp/http/10.244.1.2/8080 goto ep-default/web/tcp/http/10.244.1.2/8080',
      'ip saddr @aff-default/web/tcp/http/10.244.1.3/8080 goto ep-default/web/tcp/http/10.244.1.3/8080',
      'numgen random mod 2 vmap { 0 : goto ep-default/web/tcp/http/10.244.1.2/8080, 1 : goto ep-default/web/tcp/http/10.244.1.3/8080 }',
    ]);
    expect(fragment.chains.get('ep-default/web/tcp/http/10.244.1.2/8080')).toEqual([
      'update @aff-default/web/tcp/http/10.244.1.2/8080 { ip saddr }',
      'meta l4proto tcp dnat to 10.244.1.2:8080',
    ]);
  });

  it('UDP and SCTP ports by protocol; ExternalName, headless and other proxies’ Services add nothing', () => {
    const ports: TestPort[] = [
      { name: 'dns', protocol: 'UDP', port: 53, targetPort: 53 },
      { name: 'sig', protocol: 'SCTP', port: 9, targetPort: 9 },
    ];
    expect([...fragmentOf({}, [{ ip: '10.244.1.2' }], ports).chains.keys()]).toEqual(['svc-default/web/udp/dns', 'svc-default/web/sctp/sig']);
    expect(servicePorts(serviceObject('x', 'None', WEB), [])).toEqual([]);
    expect(servicePorts(serviceObject('x', '', WEB, { type: 'ExternalName', externalName: 'example.org' }), [])).toEqual([]);
    const other = serviceObject('x', '10.96.0.3', WEB);
    other.metadata.labels = { 'service.kubernetes.io/service-proxy-name': 'elsewhere' };
    expect(servicePorts(other, [])).toEqual([]);
  });
});

describe('sync scripts', () => {
  it('a fresh full sync replaces whatever table was there in the same transaction, and hooks the base chains', () => {
    const script = full(fragmentOf({}, [{ ip: '10.244.1.2' }]));
    expect(script.split('\n').slice(0, 3)).toEqual(['add table ip skiff-proxy', 'delete table ip skiff-proxy', 'add table ip skiff-proxy']);
    expect(script).toContain('add chain ip skiff-proxy nat-prerouting { type nat hook prerouting priority -100; policy accept; }');
    expect(script).toContain('add rule ip skiff-proxy services ip daddr . meta l4proto . th dport vmap @service-ips');
    expect(script).toContain('add rule ip skiff-proxy unserved-check ip daddr @service-cidrs goto reject-chain');
    expect(script).toContain('add rule ip skiff-proxy reject-chain meta l4proto tcp reject with tcp reset');
    expect(script).toContain('add rule ip skiff-proxy masquerading masquerade fully-random');
    expect(script).toContain('add element ip skiff-proxy nodeport-ips { 192.168.1.10 }');
    expect(script).toContain('add element ip skiff-proxy service-ips { 10.96.0.10 . tcp . 80 : goto svc-default/web/tcp/http }');
  });

  it('a repairing full sync flushes instead, keeps affinity sets, and deletes chains no longer wanted', () => {
    const sticky = fragmentOf({ sessionAffinity: 'ClientIP' }, [{ ip: '10.244.1.2' }]);
    const script = fullSyncScript(CONFIG, {
      fresh: false,
      nodeIPs: [],
      serviceCIDRs: [],
      fragments: [sticky],
      elements: sticky.elements,
      current: { chains: ['svc-default/web/tcp/http', 'svc-default/gone/tcp/80'], sets: new Map([['aff-default/gone/tcp/80/10.244.1.9/80', 10_800]]) },
    });
    expect(script).not.toContain('delete table');
    expect(script).toContain('flush map ip skiff-proxy service-ips');
    expect(script).toContain('flush chain ip skiff-proxy svc-default/web/tcp/http');
    expect(script).toContain('add set ip skiff-proxy aff-default/web/tcp/http/10.244.1.2/8080 { type ipv4_addr; flags dynamic,timeout; timeout 10800s; }');
    expect(script).toContain('delete set ip skiff-proxy aff-default/gone/tcp/80/10.244.1.9/80');
    expect(script.trim().split('\n').at(-1)).toBe('delete chain ip skiff-proxy svc-default/gone/tcp/80');
  });

  it('an incremental sync touches only the changed chains and entries', () => {
    const index = new ElementIndex();
    const before = fragmentOf({}, [{ ip: '10.244.1.2' }, { ip: '10.244.1.3' }]);
    index.replace('default/web', [], before.elements);
    const after = fragmentOf({}, [{ ip: '10.244.1.2' }]);
    const script = incrementalScript(CONFIG, [{ previous: before, next: after }], index.replace('default/web', before.elements, after.elements));
    expect(script.trim().split('\n')).toEqual([
      'flush chain ip skiff-proxy svc-default/web/tcp/http',
      'delete element ip skiff-proxy hairpin-endpoints { 10.244.1.3 . 10.244.1.3 }',
      'add rule ip skiff-proxy svc-default/web/tcp/http ip daddr 10.96.0.10 ip saddr != 10.244.0.0/16 jump mark-for-masquerade',
      'add rule ip skiff-proxy svc-default/web/tcp/http meta l4proto tcp dnat to 10.244.1.2:8080',
    ]);
    const removal = incrementalScript(CONFIG, [{ previous: after }], index.replace('default/web', after.elements, []));
    expect(removal.trim().split('\n')).toEqual([
      'flush chain ip skiff-proxy svc-default/web/tcp/http',
      'delete element ip skiff-proxy cluster-ips { 10.96.0.10 }',
      'delete element ip skiff-proxy hairpin-endpoints { 10.244.1.2 . 10.244.1.2 }',
      'delete element ip skiff-proxy service-ips { 10.96.0.10 . tcp . 80 }',
      'delete chain ip skiff-proxy svc-default/web/tcp/http',
    ]);
    expect(incrementalScript(CONFIG, [{ previous: after, next: after }], [])).toBe('');
  });

  it('an entry two Services claim stays until the last of them lets go', () => {
    const index = new ElementIndex();
    const element = { container: 'hairpin-endpoints', key: '10.244.1.2 . 10.244.1.2', value: '' };
    expect(index.replace('a', [], [element])).toHaveLength(1);
    expect(index.replace('b', [], [element])).toHaveLength(0);
    expect(index.replace('a', [element], [])).toHaveLength(0);
    expect(index.replace('b', [element], [])).toEqual([{ container: 'hairpin-endpoints', key: '10.244.1.2 . 10.244.1.2', before: '', after: undefined }]);
  });

  it('UDP flows to a removed endpoint are named for conntrack, per service address and NodePort', () => {
    const ports: TestPort[] = [{ name: 'dns', protocol: 'UDP', port: 53, targetPort: 53, nodePort: 30053 }];
    const of = (eps: TestEndpoint[]) => servicePorts(serviceObject('dns', '10.96.0.10', ports, { type: 'NodePort' }), [sliceObject('dns', ports, eps)]);
    expect(staleFlows(of([{ ip: '10.244.1.2' }, { ip: '10.244.1.3' }]), of([{ ip: '10.244.1.3' }]), LOCAL)).toEqual([
      ['-p', 'udp', '--orig-dst', '10.96.0.10', '--orig-port-dst', '53', '--dst-nat', '10.244.1.2'],
      ['-p', 'udp', '--orig-port-dst', '30053', '--dst-nat', '10.244.1.2'],
    ]);
    expect(staleFlows(of([{ ip: '10.244.1.2' }]), of([{ ip: '10.244.1.2' }]), LOCAL)).toEqual([]);
  });

  it.skipIf(!isRoot)('nft accepts every script above (checked by the kernel in a scratch namespace)', () => {
    const ports = [{ ...WEB[0]!, nodePort: 30080 }];
    const fragments = [
      fragmentOf(
        { type: 'NodePort', externalTrafficPolicy: 'Local', sessionAffinity: 'ClientIP' },
        [{ ip: '10.244.1.2', node: 'node-1' }, { ip: '10.244.2.2' }],
        ports,
      ),
      fragmentOf(
        { internalTrafficPolicy: 'Local' },
        [{ ip: '10.244.1.5', node: 'node-1' }],
        [{ name: 'dns', protocol: 'UDP', port: 53, targetPort: 53 }],
        '10.96.0.11',
      ),
      fragmentOf({}, [{ ip: '10.244.1.6' }, { ip: '10.244.1.7' }], [{ protocol: 'SCTP', port: 9, targetPort: 9 }], '10.96.0.12'),
      fragmentOf({}, [], WEB, '10.96.0.13'),
    ];
    expect(() => nftAccepts(full(...fragments))).not.toThrow();
  });
});
