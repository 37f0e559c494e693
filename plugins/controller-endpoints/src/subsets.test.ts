import type { EndpointAddress, EndpointSubset, Pod, Service, ServicePort } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { buildSubsets, endpointsLabels, planEndpoints, truncateSubsets } from './subsets.js';

function service(options: { ports?: ServicePort[]; clusterIP?: string; publishNotReadyAddresses?: boolean; labels?: Record<string, string> } = {}): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-web', ...(options.labels ? { labels: options.labels } : {}) },
    spec: {
      selector: { app: 'web' },
      clusterIP: options.clusterIP ?? '10.96.0.10',
      ports: options.ports ?? [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }],
      ...(options.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
    },
  };
}

function pod(name: string, ip: string, options: { ready?: boolean; terminating?: boolean; webPort?: number; node?: string } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      labels: { app: 'web' },
      ...(options.terminating ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
    },
    spec: { nodeName: options.node ?? 'node-1', containers: [{ name: 'c', ports: [{ name: 'web', containerPort: options.webPort ?? 8080 }] }] },
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: options.ready === false ? 'False' : 'True' }] },
  };
}

const address = (name: string, ip: string, node = 'node-1'): EndpointAddress => ({
  ip,
  nodeName: node,
  targetRef: { kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` },
});

describe('buildSubsets', () => {
  it('lists ready pods under addresses and the others under notReadyAddresses, sorted by IP, with the resolved ports', () => {
    const subsets = buildSubsets(service(), [pod('b', '10.244.1.2'), pod('a', '10.244.1.1'), pod('c', '10.244.1.3', { ready: false })]);
    expect(subsets).toEqual([
      {
        addresses: [address('a', '10.244.1.1'), address('b', '10.244.1.2')],
        notReadyAddresses: [address('c', '10.244.1.3')],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ]);
  });

  it('groups pods serving different port numbers into different subsets, and leaves out pods without the port', () => {
    const subsets = buildSubsets(service(), [pod('a', '10.244.1.1'), pod('b', '10.244.1.2', { webPort: 9090 })]);
    expect(subsets.map((subset) => [subset.addresses?.map((a) => a.ip), subset.ports])).toEqual([
      [['10.244.1.1'], [{ name: 'http', port: 8080, protocol: 'TCP' }]],
      [['10.244.1.2'], [{ name: 'http', port: 9090, protocol: 'TCP' }]],
    ]);
    const numeric = service({ ports: [{ port: 80, targetPort: 'missing' }] });
    expect(buildSubsets(numeric, [pod('a', '10.244.1.1')])).toEqual([]);
  });

  it('leaves terminating pods out, unless the Service publishes not-ready addresses (then everything is ready)', () => {
    const pods = [pod('a', '10.244.1.1', { terminating: true }), pod('b', '10.244.1.2', { ready: false })];
    expect(buildSubsets(service(), pods)).toEqual([
      { notReadyAddresses: [address('b', '10.244.1.2')], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
    ]);
    expect(buildSubsets(service({ publishNotReadyAddresses: true }), pods)).toEqual([
      { addresses: [address('a', '10.244.1.1'), address('b', '10.244.1.2')], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
    ]);
  });

  it('gives a headless Service without ports bare addresses', () => {
    expect(buildSubsets(service({ clusterIP: 'None', ports: [] }), [pod('a', '10.244.1.1')])).toEqual([{ addresses: [address('a', '10.244.1.1')] }]);
    expect(buildSubsets(service({ ports: [] }), [pod('a', '10.244.1.1')])).toEqual([]);
  });
});

describe('truncateSubsets', () => {
  const addresses = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => address(`${prefix}${i}`, `10.${prefix.length}.${Math.floor(i / 250)}.${i % 250}`));
  const count = (subsets: EndpointSubset[]) => subsets.map((s) => [s.addresses?.length ?? 0, s.notReadyAddresses?.length ?? 0]);

  it('keeps everything up to the limit', () => {
    const subsets = [{ addresses: addresses('a', 600), notReadyAddresses: addresses('n', 400) }];
    expect(truncateSubsets(subsets)).toEqual({ subsets, truncated: false });
  });

  it('cuts not-ready addresses first, in proportion to each subset', () => {
    const subsets = [
      { addresses: addresses('a', 500), notReadyAddresses: addresses('nn', 300) },
      { addresses: addresses('aa', 300), notReadyAddresses: addresses('nnn', 100) },
    ];
    const result = truncateSubsets(subsets);
    expect(result.truncated).toBe(true);
    expect(count(result.subsets)).toEqual([
      [500, 150],
      [300, 50],
    ]);
  });

  it('cuts ready addresses in proportion when they alone are too many, dropping every not-ready one', () => {
    const subsets = [{ addresses: addresses('a', 900), notReadyAddresses: addresses('n', 10) }, { addresses: addresses('aa', 300) }];
    expect(count(truncateSubsets(subsets).subsets)).toEqual([
      [750, 0],
      [250, 0],
    ]);
  });
});

describe('planEndpoints', () => {
  const pods = [pod('a', '10.244.1.1')];

  it('creates an Endpoints named like the Service, labelled skip-mirror, with the trigger time', () => {
    expect(planEndpoints({ service: service({ labels: { tier: 'front' } }), pods, triggerTime: '2025-01-01T00:00:00Z' })).toEqual({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'web',
        namespace: 'default',
        labels: { tier: 'front', 'endpointslice.kubernetes.io/skip-mirror': 'true' },
        annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2025-01-01T00:00:00Z' },
      },
      subsets: [{ addresses: [address('a', '10.244.1.1')], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
    });
  });

  it('writes nothing when subsets, labels and capacity are as they should be', () => {
    const current = {
      ...planEndpoints({ service: service(), pods })!,
      metadata: { ...planEndpoints({ service: service(), pods })!.metadata, resourceVersion: '5' },
    };
    expect(planEndpoints({ service: service(), pods, current, triggerTime: '2025-02-02T00:00:00Z' })).toBeUndefined();
    const changed = planEndpoints({ service: service(), pods: [pod('a', '10.244.1.1', { ready: false })], current });
    expect(changed!.metadata.resourceVersion).toBe('5');
    expect(changed!.metadata.annotations).toBeUndefined();
    expect(changed!.subsets![0]!.notReadyAddresses).toHaveLength(1);
  });

  it('marks Endpoints truncated beyond 1000 addresses, and unmarks them once they fit', () => {
    const many = Array.from({ length: 1005 }, (_, i) => pod(`p${i}`, `10.244.${Math.floor(i / 250)}.${i % 250}`));
    const over = planEndpoints({ service: service(), pods: many })!;
    expect(over.metadata.annotations).toEqual({ 'endpoints.kubernetes.io/over-capacity': 'truncated' });
    expect(over.subsets![0]!.addresses).toHaveLength(1000);
    expect(planEndpoints({ service: service(), pods: many, current: over })).toBeUndefined();
    expect(planEndpoints({ service: service(), pods: many.slice(0, 10), current: over })!.metadata.annotations).toBeUndefined();
  });

  it('labels the Endpoints of a Service without a cluster IP headless', () => {
    expect(endpointsLabels(service({ clusterIP: 'None' }))).toEqual({
      'service.kubernetes.io/headless': '',
      'endpointslice.kubernetes.io/skip-mirror': 'true',
    });
  });
});
