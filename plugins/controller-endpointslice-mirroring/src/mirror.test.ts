import type { Endpoints, EndpointSlice, EndpointSubset } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { addressTypeOf, desiredEndpoints, planMirroring, repackSubsets } from './mirror.js';

function endpoints(subsets: EndpointSubset[], metadata: Partial<Endpoints['metadata']> = {}): Endpoints {
  return { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'db', namespace: 'default', uid: 'uid-db', ...metadata }, subsets };
}

/** A planned slice as the API server would store it. */
function stored(slice: EndpointSlice, name: string): EndpointSlice {
  const { generateName: _generated, ...metadata } = slice.metadata;
  return { ...slice, metadata: { ...metadata, name, uid: `uid-${name}`, resourceVersion: '7', generation: 1 } };
}

describe('repacking subsets', () => {
  it('merges ports that reach the same addresses, and keeps not-ready over ready', () => {
    const packed = repackSubsets([
      { addresses: [{ ip: '10.0.0.2' }, { ip: '10.0.0.1' }], ports: [{ name: 'a', port: 80, protocol: 'TCP' }] },
      { addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ name: 'b', port: 81, protocol: 'TCP' }] },
      { addresses: [{ ip: '10.0.0.3' }], notReadyAddresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'c', port: 82, protocol: 'TCP' }] },
      { addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'c', port: 82, protocol: 'TCP' }] },
    ]);
    expect(packed).toEqual([
      {
        ports: [
          { name: 'a', port: 80, protocol: 'TCP' },
          { name: 'b', port: 81, protocol: 'TCP' },
        ],
        addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }],
        notReadyAddresses: [],
      },
      { ports: [{ name: 'c', port: 82, protocol: 'TCP' }], addresses: [{ ip: '10.0.0.3' }], notReadyAddresses: [{ ip: '10.0.0.1' }] },
    ]);
  });

  it('tells addresses apart by IP and target uid, and keeps addresses without ports', () => {
    const packed = repackSubsets([
      {
        addresses: [
          { ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'a', uid: 'u1' } },
          { ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'b', uid: 'u2' } },
        ],
      },
    ]);
    expect(packed).toEqual([
      { ports: [], addresses: [expect.objectContaining({ targetRef: expect.objectContaining({ uid: 'u1' }) }), expect.anything()], notReadyAddresses: [] },
    ]);
  });
});

describe('desired endpoints', () => {
  it('sorts addresses into IPv4 and IPv6 slices, skips invalid IPs and caps each subset', () => {
    const subsets: EndpointSubset[] = [
      {
        addresses: [{ ip: '10.0.0.1', nodeName: 'n1', hostname: 'h1' }, { ip: 'fd00::1' }, { ip: 'not-an-ip' }, { ip: '10.0.0.2' }],
        notReadyAddresses: [{ ip: '10.0.0.3' }],
        ports: [{ port: 5432, protocol: 'TCP' }],
      },
    ];
    const desired = desiredEndpoints(endpoints(subsets), 1000);
    expect(desired.invalid).toBe(1);
    expect(desired.skipped).toBe(1);
    // Ready addresses first, in IP order: a cap of two leaves out the IPv6 one, the invalid one and the not-ready one.
    const capped = desiredEndpoints(endpoints(subsets), 2);
    expect(capped).toMatchObject({ invalid: 0, skipped: 3 });
    expect([...capped.slices.values()].map((slice) => slice.endpoints.size)).toEqual([2, 0]);
    const slices = [...desired.slices.values()].map((slice) => ({ type: slice.addressType, ports: slice.ports, endpoints: [...slice.endpoints.values()] }));
    expect(slices).toEqual([
      {
        type: 'IPv4',
        ports: [{ name: '', port: 5432, protocol: 'TCP' }],
        endpoints: [
          { addresses: ['10.0.0.1'], conditions: { ready: true }, nodeName: 'n1', hostname: 'h1' },
          { addresses: ['10.0.0.2'], conditions: { ready: true } },
          { addresses: ['10.0.0.3'], conditions: { ready: false } },
        ],
      },
      { type: 'IPv6', ports: [{ name: '', port: 5432, protocol: 'TCP' }], endpoints: [{ addresses: ['fd00::1'], conditions: { ready: true } }] },
    ]);
    expect(addressTypeOf('::ffff:10.0.0.1')).toBe('IPv4');
    expect(addressTypeOf('10.0.0.256')).toBeUndefined();
  });
});

describe('planning the mirrored slices', () => {
  const source = endpoints([{ addresses: [{ ip: '10.1.2.3' }], ports: [{ name: 'example', port: 80, protocol: 'TCP' }] }], {
    labels: { team: 'db' },
    annotations: { note: 'kept', 'endpoints.kubernetes.io/last-change-trigger-time': 'x', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
  });

  it('creates one slice per address type and port set, with the Endpoints’ labels and annotations and an owner reference', () => {
    const plan = planMirroring(source, [], 1000);
    expect(plan.update).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.create).toEqual([
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          generateName: 'db-',
          namespace: 'default',
          labels: { team: 'db', 'kubernetes.io/service-name': 'db', 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' },
          annotations: { note: 'kept' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name: 'db', uid: 'uid-db', controller: true, blockOwnerDeletion: true }],
        },
        addressType: 'IPv4',
        ports: [{ name: 'example', port: 80, protocol: 'TCP' }],
        endpoints: [{ addresses: ['10.1.2.3'], conditions: { ready: true } }],
      },
    ]);
  });

  it('leaves an up-to-date slice alone and rewrites one whose endpoints, labels or annotations changed', () => {
    const slice = stored(planMirroring(source, [], 1000).create[0]!, 'db-abc');
    expect(planMirroring(source, [slice], 1000)).toEqual({ create: [], update: [], delete: [], invalid: 0, skipped: 0 });

    const moved = endpoints([{ addresses: [{ ip: '10.2.3.4' }], ports: [{ name: 'example', port: 80, protocol: 'TCP' }] }], source.metadata);
    const update = planMirroring(moved, [slice], 1000).update;
    expect(update).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ name: 'db-abc', resourceVersion: '7' }) })]);
    expect(update[0]!.endpoints).toEqual([{ addresses: ['10.2.3.4'], conditions: { ready: true } }]);

    const relabelled = { ...source, metadata: { ...source.metadata, labels: { team: 'other' } } };
    expect(planMirroring(relabelled, [slice], 1000).update[0]!.metadata.labels).toEqual(expect.objectContaining({ team: 'other' }));
  });

  it('reuses a slice of the old ports for the new ones, and deletes duplicates and emptied slices', () => {
    const slice = stored(planMirroring(source, [], 1000).create[0]!, 'db-abc');
    const duplicate = stored(planMirroring(source, [], 1000).create[0]!, 'db-dup');
    const newPorts = endpoints([{ addresses: [{ ip: '10.1.2.3' }], ports: [{ name: 'example', port: 8080, protocol: 'TCP' }] }], source.metadata);
    const plan = planMirroring(newPorts, [slice, duplicate], 1000);
    expect(plan.create).toEqual([]);
    expect(plan.update).toEqual([
      expect.objectContaining({ metadata: expect.objectContaining({ name: 'db-abc' }), ports: [{ name: 'example', port: 8080, protocol: 'TCP' }] }),
    ]);
    expect(plan.update[0]!.metadata).not.toHaveProperty('generateName');
    expect(plan.delete.map((s) => s.metadata.name)).toEqual(['db-dup']);

    const emptied = endpoints([{ ports: [{ name: 'example', port: 80, protocol: 'TCP' }] }], source.metadata);
    expect(planMirroring(emptied, [slice], 1000).delete.map((s) => s.metadata.name)).toEqual(['db-abc']);
  });
});
