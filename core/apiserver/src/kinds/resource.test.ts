import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { RESOURCE_KINDS } from './resource.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(RESOURCE_KINDS);

const claimBody = {
  metadata: { name: 'gpu', namespace: 'default' },
  spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com' } }] } },
};

describe('resource claims and templates', () => {
  it('defaults requests to one device and prints the state', () => {
    const claim = create('resourceclaims', claimBody);
    expect(claim.spec).toEqual({
      devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com', allocationMode: 'ExactCount', count: 1 } }] },
    });
    expect(cells('resourceclaims', claim)).toEqual(['gpu', 'pending', '3h5m']);
    claim.status = { allocation: { devices: {} }, reservedFor: [{ resource: 'pods', name: 'p', uid: 'u' }] };
    expect(cells('resourceclaims', claim)).toEqual(['gpu', 'allocated,reserved', '3h5m']);
  });

  it('keeps the claim spec immutable and checks requests', () => {
    const old = create('resourceclaims', claimBody);
    const changed = structuredClone(old) as KubeObject & { spec: { devices: { requests: { exactly: { count: number } }[] } } };
    changed.spec.devices.requests[0]!.exactly.count = 2;
    expect(fields('resourceclaims', changed, old)).toHaveLength(1);
    expect(fields('resourceclaims', changed, old)[0]).toMatch(/^spec: Invalid value: .*: field is immutable$/);
    expect(
      fields('resourceclaims', {
        metadata: { name: 'x', namespace: 'default' },
        spec: { devices: { requests: [{ name: 'a' }, { name: 'a', exactly: { deviceClassName: 'c' } }] } },
      }),
    ).toEqual([
      'spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required',
      'spec.devices.requests[1].name: Duplicate value: "a"',
    ]);
  });

  it('accepts a claim template and device class, printing Age', () => {
    const template = create('resourceclaimtemplates', { metadata: { name: 'gpu', namespace: 'default' }, spec: { spec: claimBody.spec } });
    expect(cells('resourceclaimtemplates', template)).toEqual(['gpu', '3h5m']);
    const deviceClass = create('deviceclasses', {
      metadata: { name: 'gpu.example.com' },
      spec: { selectors: [{ cel: { expression: 'device.driver == "gpu.example.com"' } }] },
    });
    expect(cells('deviceclasses', deviceClass)).toEqual(['gpu.example.com', '3h5m']);
  });
});

describe('resource slices', () => {
  it('prints Node, Driver and Pool and needs exactly one node selection', () => {
    const body = {
      metadata: { name: 'node-1-gpu' },
      spec: { driver: 'gpu.example.com', pool: { name: 'node-1', generation: 1, resourceSliceCount: 1 }, nodeName: 'node-1', devices: [{ name: 'gpu-0' }] },
    };
    const slice = create('resourceslices', body);
    expect(cells('resourceslices', slice)).toEqual(['node-1-gpu', 'node-1', 'gpu.example.com', 'node-1', '3h5m']);
    expect(fields('resourceslices', { ...body, spec: { ...body.spec, allNodes: true } })).toEqual([
      'spec: Invalid value: "{`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required',
    ]);
  });
});
