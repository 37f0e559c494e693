import { describe, expect, it } from 'vitest';
import { NETWORKING_KINDS } from './networking.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(NETWORKING_KINDS);

const backend = { service: { name: 'web', port: { number: 80 } } };
const ingressBody = (path: object) => ({
  metadata: { name: 'web', namespace: 'default' },
  spec: { ingressClassName: 'nginx', rules: [{ host: 'example.com', http: { paths: [path] } }] },
});

describe('ingresses', () => {
  it('accepts `kubectl create ingress` and prints class, hosts, address and ports', () => {
    const ing = create('ingresses', ingressBody({ path: '/', pathType: 'Prefix', backend })) as any;
    expect(ing.status).toEqual({});
    expect(cells('ingresses', ing)).toEqual(['web', 'nginx', 'example.com', '', '80', '3h5m']);
    ing.spec.tls = [{ hosts: ['example.com'] }];
    ing.spec.rules.push({ host: 'a.io' }, { host: 'b.io' }, { host: 'c.io' });
    ing.status = { loadBalancer: { ingress: [{ ip: '203.0.113.10' }, { hostname: 'lb.example.com' }] } };
    expect(cells('ingresses', ing).slice(2, 5)).toEqual(['example.com,a.io,b.io + 1 more...', '203.0.113.10,...', '80, 443']);
  });

  it('requires a path type and a backend, and checks paths', () => {
    expect(fields('ingresses', ingressBody({ path: '/', backend }))).toEqual([
      'spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
    ]);
    expect(fields('ingresses', ingressBody({ path: '/', pathType: 'Regex', backend }))).toEqual([
      'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
    ]);
    expect(fields('ingresses', ingressBody({ path: 'api//v1', pathType: 'Exact' }))).toEqual([
      'spec.rules[0].http.paths[0].path: Invalid value: "api//v1": must be an absolute path',
      'spec.rules[0].http.paths[0].path: Invalid value: "api//v1": must not contain \'//\'',
      'spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required',
    ]);
    expect(fields('ingresses', ingressBody({ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: {} } } }))).toEqual([
      'spec.rules[0].http.paths[0].backend: Required value: port name or number is required',
    ]);
    expect(fields('ingresses', { metadata: { name: 'x', namespace: 'default' }, spec: {} })).toEqual([
      'spec.rules: Invalid value: []: either `defaultBackend` or `rules` must be specified',
    ]);
  });

  it('checks hosts', () => {
    const body = ingressBody({ path: '/', pathType: 'Prefix', backend }) as any;
    body.spec.rules[0].host = '10.0.0.1';
    expect(fields('ingresses', body)).toEqual(['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']);
    body.spec.rules[0].host = '*.example.com';
    expect(fields('ingresses', body)).toEqual([]);
  });
});

describe('ingress classes', () => {
  const body = {
    metadata: { name: 'nginx' },
    spec: { controller: 'k8s.io/ingress-nginx', parameters: { kind: 'Params', apiGroup: 'example.com', name: 'p' } },
  };

  it('defaults the parameters scope and keeps the controller', () => {
    const ic = create('ingressclasses', body) as any;
    expect(ic.spec.parameters.scope).toBe('Cluster');
    expect(cells('ingressclasses', ic)).toEqual(['nginx', 'k8s.io/ingress-nginx', 'Params.example.com/p', '3h5m']);
    expect(fields('ingressclasses', { ...ic, spec: { ...ic.spec, controller: 'example.com/other' } }, ic)).toEqual([
      'spec.controller: Invalid value: "example.com/other": field is immutable',
    ]);
    expect(fields('ingressclasses', { metadata: { name: 'x' }, spec: { controller: 'nginx' } })).toEqual([
      'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
    ]);
    expect(
      fields('ingressclasses', { metadata: { name: 'x' }, spec: { controller: 'a.io/b', parameters: { kind: 'K', name: 'n', scope: 'Namespace' } } }),
    ).toEqual(["spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]);
  });
});

describe('network policies', () => {
  it('defaults policy types and port protocols', () => {
    const np = create('networkpolicies', {
      metadata: { name: 'db', namespace: 'default' },
      spec: { podSelector: { matchLabels: { app: 'db' } }, ingress: [{ ports: [{ port: 5432 }] }], egress: [{}] },
    }) as any;
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.ingress[0].ports[0].protocol).toBe('TCP');
    expect(cells('networkpolicies', np)).toEqual(['db', 'app=db', '3h5m']);
    const deny = create('networkpolicies', { metadata: { name: 'deny', namespace: 'default' }, spec: { podSelector: {} } }) as any;
    expect(deny.spec.policyTypes).toEqual(['Ingress']);
    expect(cells('networkpolicies', deny)[1]).toBe('<none>');
  });

  it('checks peers and port ranges', () => {
    expect(
      fields('networkpolicies', {
        metadata: { name: 'x', namespace: 'default' },
        spec: {
          podSelector: {},
          ingress: [{ ports: [{ port: 'http', endPort: 90 }], from: [{}, { ipBlock: { cidr: '10.0.0.0/16', except: ['192.168.0.0/24'] }, podSelector: {} }] }],
        },
      }),
    ).toEqual([
      'spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric',
      'spec.ingress[0].from[0]: Required value: must specify a peer',
      'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "192.168.0.0/24": must be a strict subset of `cidr`',
      'spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer',
    ]);
  });
});

describe('IP addresses and service CIDRs', () => {
  it('names IP addresses by their canonical address and prints the parent', () => {
    const ip = create('ipaddresses', {
      metadata: { name: '10.96.0.10' },
      spec: { parentRef: { group: '', resource: 'services', namespace: 'kube-system', name: 'kube-dns' } },
    });
    expect(cells('ipaddresses', ip)).toEqual(['10.96.0.10', 'services/kube-system/kube-dns']);
    expect(fields('ipaddresses', { metadata: { name: '2001:DB8::1' }, spec: { parentRef: { resource: 'services', name: 'x' } } })).toEqual([
      'metadata.name: Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")',
    ]);
    expect(fields('ipaddresses', { metadata: { name: 'ten' }, spec: {} })).toEqual([
      'metadata.name: Invalid value: "ten": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'spec.parentRef: Required value',
    ]);
  });

  it('allows a service CIDR to become dual-stack but not to change', () => {
    const sc = create('servicecidrs', { metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.96.0.0/12'] } }) as any;
    expect(cells('servicecidrs', sc)).toEqual(['kubernetes', '10.96.0.0/12', '3h5m']);
    expect(fields('servicecidrs', { ...sc, spec: { cidrs: ['10.96.0.0/12', 'fd00::/108'] } }, sc)).toEqual([]);
    expect(fields('servicecidrs', { ...sc, spec: { cidrs: ['10.0.0.0/16'] } }, sc)).toEqual(['spec.cidrs: Invalid value: ["10.0.0.0/16"]: field is immutable']);
    expect(fields('servicecidrs', { metadata: { name: 'x' }, spec: { cidrs: ['10.0.0.0/16', '10.1.0.0/16'] } })).toEqual([
      'spec.cidrs: Invalid value: ["10.0.0.0/16","10.1.0.0/16"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64',
    ]);
  });
});
