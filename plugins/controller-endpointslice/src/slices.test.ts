import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Service } from '@skiff/api';
import { addressTypesFor, endpointPorts, planSlices, sliceLabels, type SlicePlanInput } from './slices.js';
import { node, pod, service, stored } from './test-objects.js';

const nodes = new Map<string, Node>([
  ['node-1', node('node-1', 'zone-a')],
  ['node-2', node('node-2')],
]);

function plan(input: Partial<SlicePlanInput> & { service: Service }) {
  return planSlices({ pods: [], existing: [], node: (name) => nodes.get(name), maxEndpointsPerSlice: 100, ...input });
}

const web = service('web');

describe('planSlices: one slice per port set', () => {
  it('builds a slice from ready pods: labels, owner, generateName, endpoints with conditions, node, zone and a reference', () => {
    const result = plan({
      service: web,
      pods: [pod('web-1', { ip: '10.244.1.5' }), pod('web-2', { ip: '10.244.2.7', node: 'node-2' })],
      triggerTime: '2025-01-01T00:01:00Z',
    });
    expect(result.update).toEqual([]);
    expect(result.delete).toEqual([]);
    expect(result.create).toEqual([
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          generateName: 'web-',
          namespace: 'default',
          labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true }],
          annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2025-01-01T00:01:00Z' },
        },
        addressType: 'IPv4',
        endpoints: [
          {
            addresses: ['10.244.1.5'],
            conditions: { ready: true, serving: true, terminating: false },
            targetRef: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'uid-web-1' },
            nodeName: 'node-1',
            zone: 'zone-a',
          },
          {
            addresses: ['10.244.2.7'],
            conditions: { ready: true, serving: true, terminating: false },
            targetRef: { kind: 'Pod', namespace: 'default', name: 'web-2', uid: 'uid-web-2' },
            nodeName: 'node-2',
          },
        ],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ]);
  });

  it('keeps one empty placeholder slice for a Service without endpoints, and does not rewrite it', () => {
    const first = plan({ service: web, pods: [pod('web-1', { ip: '' })] });
    expect(first.create).toHaveLength(1);
    expect(first.create[0]).toMatchObject({ addressType: 'IPv4', endpoints: [], ports: [] });
    const again = plan({ service: web, existing: [stored(first.create[0]!, 'web-abcde')] });
    expect(again).toEqual({ create: [], update: [], delete: [], podsOnUnknownNodes: [] });
  });

  it('turns the placeholder into the first real slice (an update of the same name, not a delete and a create)', () => {
    const placeholder = stored(plan({ service: web }).create[0]!, 'web-abcde', '7');
    const result = plan({ service: web, existing: [placeholder], pods: [pod('web-1')] });
    expect(result.create).toEqual([]);
    expect(result.delete).toEqual([]);
    expect(result.update).toHaveLength(1);
    expect(result.update[0]!.metadata).toMatchObject({ name: 'web-abcde', resourceVersion: '7' });
    expect(result.update[0]!.endpoints).toHaveLength(1);
  });

  it('resolves named target ports per pod, and puts pods with different numbers for the name in different slices', () => {
    const named = service('api', { ports: [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP', appProtocol: 'http' }] });
    const pods = [
      pod('a-1', { app: 'api', ip: '10.244.1.1', ports: [{ name: 'web', containerPort: 8080 }] }),
      pod('a-2', { app: 'api', ip: '10.244.1.2', ports: [{ name: 'web', containerPort: 9090 }] }),
      pod('a-3', { app: 'api', ip: '10.244.1.3', ports: [{ name: 'web', containerPort: 8080 }] }),
      // Same name, other protocol: not a match, so this pod serves no port of the Service.
      pod('a-4', { app: 'api', ip: '10.244.1.4', ports: [{ name: 'web', containerPort: 8080, protocol: 'UDP' }] }),
    ];
    const result = plan({ service: named, pods });
    const byPort = new Map(result.create.map((slice) => [JSON.stringify(slice.ports), (slice.endpoints ?? []).map((e) => e.targetRef?.name)]));
    expect(byPort).toEqual(
      new Map([
        [JSON.stringify([{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }]), ['a-1', 'a-3']],
        [JSON.stringify([{ name: 'http', port: 9090, protocol: 'TCP', appProtocol: 'http' }]), ['a-2']],
        [JSON.stringify([]), ['a-4']],
      ]),
    );
  });

  it('carries numeric target ports as they are, and the port name empty when the Service port has none', () => {
    const single = service('one', { ports: [{ port: 80, targetPort: 3000, protocol: 'UDP' }] });
    expect(endpointPorts(single, pod('p', { app: 'one' }))).toEqual([{ name: '', port: 3000, protocol: 'UDP' }]);
  });

  it('splits at maxEndpointsPerSlice: 250 pods make slices of 100, 100 and 50', () => {
    const pods = Array.from({ length: 250 }, (_, i) => pod(`web-${String(i).padStart(3, '0')}`, { ip: `10.244.${Math.floor(i / 200)}.${i % 200}` }));
    const result = plan({ service: web, pods });
    expect(result.create.map((slice) => slice.endpoints?.length)).toEqual([100, 100, 50]);
    const small = plan({ service: web, pods, maxEndpointsPerSlice: 7 });
    expect(small.create).toHaveLength(36);
    expect(small.create.every((slice) => (slice.endpoints?.length ?? 0) <= 7)).toBe(true);
  });

  it('leaves out pods without an IP, finished pods, and pods whose node is unknown (reporting those)', () => {
    const result = plan({
      service: web,
      pods: [
        pod('web-1'),
        pod('web-2', { ip: '' }),
        pod('web-3', { phase: 'Succeeded', ip: '10.244.1.3' }),
        pod('web-4', { node: 'node-9', ip: '10.244.1.4' }),
      ],
    });
    expect(result.create[0]!.endpoints!.map((e) => e.targetRef?.name)).toEqual(['web-1']);
    expect(result.podsOnUnknownNodes).toEqual(['web-4']);
    const published = plan({ service: service('web', { publishNotReadyAddresses: true }), pods: [pod('web-4', { node: 'node-9', ip: '10.244.1.4' })] });
    expect(published.create[0]!.endpoints).toHaveLength(1);
    expect(published.podsOnUnknownNodes).toEqual([]);
  });
});

describe('planSlices: conditions', () => {
  const conditionsOf = (result: ReturnType<typeof plan>) =>
    Object.fromEntries(result.create.flatMap((slice) => slice.endpoints ?? []).map((e) => [e.targetRef!.name, e.conditions]));

  it('ready and serving follow the Ready condition; a terminating pod stays, not ready, serving as its condition says', () => {
    const result = plan({
      service: web,
      pods: [
        pod('ready'),
        pod('unready', { ready: false }),
        pod('leaving', { terminating: true }),
        pod('leaving-unready', { terminating: true, ready: false }),
      ],
    });
    expect(conditionsOf(result)).toEqual({
      ready: { ready: true, serving: true, terminating: false },
      unready: { ready: false, serving: false, terminating: false },
      leaving: { ready: false, serving: true, terminating: true },
      'leaving-unready': { ready: false, serving: false, terminating: true },
    });
  });

  it('publishNotReadyAddresses makes every endpoint ready', () => {
    const result = plan({
      service: service('web', { publishNotReadyAddresses: true }),
      pods: [pod('unready', { ready: false }), pod('leaving', { terminating: true })],
    });
    expect(conditionsOf(result)).toEqual({
      unready: { ready: true, serving: false, terminating: false },
      leaving: { ready: true, serving: true, terminating: true },
    });
  });
});

describe('planSlices: minimal changes', () => {
  const pods = Array.from({ length: 5 }, (_, i) => pod(`web-${i}`, { ip: `10.244.1.${i + 1}` }));
  const existing = (maxEndpointsPerSlice: number, list = pods) =>
    plan({ service: web, pods: list, maxEndpointsPerSlice }).create.map((slice, i) => stored(slice, `web-s${i}`));

  it('writes nothing when nothing changed, whatever the trigger time', () => {
    expect(plan({ service: web, pods, existing: existing(100), triggerTime: '2025-02-02T00:00:00Z' })).toEqual({
      create: [],
      update: [],
      delete: [],
      podsOnUnknownNodes: [],
    });
  });

  it('rewrites only the slice whose endpoint changed', () => {
    const slices = existing(2);
    expect(slices.map((slice) => slice.endpoints!.length)).toEqual([2, 2, 1]);
    const changed = pods.map((p) => (p.metadata.name === 'web-2' ? pod('web-2', { ip: '10.244.1.3', ready: false }) : p));
    const result = plan({ service: web, pods: changed, existing: slices, maxEndpointsPerSlice: 2 });
    expect(result.create).toEqual([]);
    expect(result.delete).toEqual([]);
    expect(result.update.map((slice) => slice.metadata.name)).toEqual(['web-s1']);
    expect(result.update[0]!.endpoints!.find((e) => e.targetRef?.name === 'web-2')!.conditions).toEqual({ ready: false, serving: false, terminating: false });
  });

  it('deletes a slice whose endpoints all went, and puts new pods into a slice being rewritten before opening a new one', () => {
    const slices = existing(2);
    const result = plan({ service: web, pods: pods.filter((p) => !['web-0', 'web-1'].includes(p.metadata.name!)), existing: slices, maxEndpointsPerSlice: 2 });
    expect(result.delete.map((slice) => slice.metadata.name)).toEqual(['web-s0']);
    expect(result.update).toEqual([]);
    expect(result.create).toEqual([]);

    const grown = [...pods.filter((p) => p.metadata.name !== 'web-3'), pod('web-9', { ip: '10.244.1.9' })];
    const refill = plan({ service: web, pods: grown, existing: slices, maxEndpointsPerSlice: 2 });
    expect(refill.create).toEqual([]);
    expect(refill.update.map((slice) => [slice.metadata.name, slice.endpoints!.map((e) => e.targetRef!.name)])).toEqual([['web-s1', ['web-2', 'web-9']]]);
  });

  it('fills the unchanged slice the new endpoints fit best rather than creating one', () => {
    const slices = existing(3);
    expect(slices.map((slice) => slice.endpoints!.length)).toEqual([3, 2]);
    const result = plan({ service: web, pods: [...pods, pod('web-7', { ip: '10.244.1.7' })], existing: slices, maxEndpointsPerSlice: 3 });
    expect(result.create).toEqual([]);
    expect(result.update.map((slice) => [slice.metadata.name, slice.endpoints!.length])).toEqual([['web-s1', 3]]);
  });

  it('rewrites slices whose labels no longer follow the Service, and sets the trigger time on what it writes', () => {
    const relabelled = service('web', { labels: { team: 'blue' } });
    const result = plan({ service: relabelled, pods, existing: existing(100), triggerTime: '2025-02-02T00:00:00.5Z' });
    expect(result.update).toHaveLength(1);
    expect(result.update[0]!.metadata.labels).toEqual({ team: 'blue', ...sliceLabels(web) });
    expect(result.update[0]!.metadata.annotations).toEqual({ 'endpoints.kubernetes.io/last-change-trigger-time': '2025-02-02T00:00:00.5Z' });
  });

  it('deletes slices of an earlier Service of the same name, and slices of an address type the Service no longer has', () => {
    const old = existing(100).map((slice) => ({
      ...slice,
      metadata: { ...slice.metadata, ownerReferences: [{ ...slice.metadata.ownerReferences![0]!, uid: 'uid-old' }] },
    }));
    const result = plan({ service: web, pods, existing: old });
    expect(result.delete.map((slice) => slice.metadata.name)).toEqual(['web-s0']);
    expect(result.create).toHaveLength(1);
    const v6: EndpointSlice = { ...existing(100)[0]!, addressType: 'IPv6', metadata: { ...existing(100)[0]!.metadata, name: 'web-v6' } };
    expect(plan({ service: web, pods, existing: [...existing(100), v6] }).delete.map((slice) => slice.metadata.name)).toEqual(['web-v6']);
  });
});

describe('addressTypesFor', () => {
  it('takes ipFamilies, then the cluster IP, then the pods', () => {
    expect(addressTypesFor({ ...web, spec: { ...web.spec, ipFamilies: ['IPv6', 'IPv4'] } }, [])).toEqual(['IPv6', 'IPv4']);
    expect(addressTypesFor(service('x', { clusterIP: 'fd00::10' }), [])).toEqual(['IPv6']);
    expect(addressTypesFor(service('x', { clusterIP: 'None' }), [pod('p', { ip: 'fd00::1' })])).toEqual(['IPv6']);
    expect(addressTypesFor(service('x', { clusterIP: '' }), [])).toEqual(['IPv4']);
  });

  it('marks slices of a Service without a cluster IP headless', () => {
    expect(sliceLabels(service('x', { clusterIP: 'None' }))).toMatchObject({ 'service.kubernetes.io/headless': '' });
  });
});
