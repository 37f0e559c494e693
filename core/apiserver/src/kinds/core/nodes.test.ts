import type { Node } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { defaultNode, validateNode } from './nodes.js';

const messages = (causes: { field?: string; message?: string }[]) => causes.map((c) => `${c.field}: ${c.message}`);

describe('validateNode', () => {
  const node = (): Node => ({
    metadata: { name: 'node-1.example.com' },
    spec: { podCIDRs: ['10.244.1.0/24'], providerID: 'skiff://node-1' },
    status: { capacity: { cpu: '4', memory: '8Gi' }, addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
  });

  it('accepts a node and checks taints, CIDRs and quantities', () => {
    expect(validateNode(node())).toEqual([]);
    const bad = node();
    bad.spec = {
      podCIDRs: ['10.244.1.0/33'],
      taints: [
        { key: 'k', effect: 'Sometimes' as never },
        { key: 'a', effect: 'NoSchedule' },
        { key: 'a', effect: 'NoSchedule' },
      ],
    };
    bad.status!.capacity = { cpu: '-1' };
    expect(messages(validateNode(bad))).toEqual([
      'spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      'spec.taints[2]: Duplicate value: core.Taint{Key:"a", Value:"", Effect:"NoSchedule", TimeAdded:<nil>}: taints must be unique by key and effect pair',
      'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
      'spec.podCIDRs[0]: Invalid value: "10.244.1.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ]);
  });

  it('lets a pod CIDR and provider ID be set once but not changed', () => {
    const old = node();
    old.spec = {};
    const assigned = node();
    expect(validateNode(assigned, old)).toEqual([]);
    const changed = node();
    changed.spec = { podCIDRs: ['10.244.2.0/24'], providerID: 'skiff://other' };
    expect(messages(validateNode(changed, node()))).toEqual([
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
      'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
    ]);
  });
});

describe('defaultNode', () => {
  it('defaults allocatable to capacity', () => {
    const node: Node = { metadata: { name: 'n' }, status: { capacity: { cpu: '4', pods: '110' } } };
    defaultNode(node);
    expect(node.status?.allocatable).toEqual({ cpu: '4', pods: '110' });
  });
});
