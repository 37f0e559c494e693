import { describe, expect, it } from 'vitest';
import type { Event, Namespace, Node } from '../types.js';
import { validateNamespace, validateNode } from './cluster.js';
import { validateEvent } from './events.js';

const messages = (causes: { field?: string; message?: string }[]) => causes.map((c) => `${c.field}: ${c.message}`);

describe('validateNamespace', () => {
  it('requires a DNS label name and no namespace', () => {
    expect(validateNamespace({ metadata: { name: 'team-a' }, spec: { finalizers: ['kubernetes'] } })).toEqual([]);
    expect(messages(validateNamespace({ metadata: { name: 'team.a', namespace: 'x' } }))).toEqual([
      `metadata.name: Invalid value: "team.a": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      'metadata.namespace: Forbidden: not allowed on this type',
    ]);
  });

  it('accepts only standard or qualified finalizers', () => {
    const namespace: Namespace = { metadata: { name: 'a' }, spec: { finalizers: ['cleanup', 'example.com/cleanup'] } };
    expect(messages(validateNamespace(namespace))).toEqual([
      'spec.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });
});

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

describe('validateEvent', () => {
  const event = (): Event => ({
    metadata: { name: 'web-1.17a0', namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u' },
    reason: 'Scheduled',
    message: 'Successfully assigned default/web-1 to node-1',
    type: 'Normal',
    source: { component: 'default-scheduler' },
  });

  it('requires the involved object to live in the event’s namespace', () => {
    expect(validateEvent(event())).toEqual([]);
    const moved = event();
    moved.involvedObject.namespace = 'other';
    expect(messages(validateEvent(moved))).toEqual(['involvedObject.namespace: Invalid value: "other": does not match event.namespace']);
  });

  it('requires who reported a new-style event and why', () => {
    const fresh = { ...event(), eventTime: '2024-01-01T00:00:00.000000Z', reason: '' };
    expect(messages(validateEvent(fresh))).toEqual([
      'reportingComponent: Required value',
      expect.stringMatching(/^reportingComponent: Invalid value: "": name part must be non-empty$/),
      expect.stringMatching(/^reportingComponent: Invalid value: "": name part must consist/),
      'reportingInstance: Required value',
      'action: Required value',
      'reason: Required value',
    ]);
  });
});
