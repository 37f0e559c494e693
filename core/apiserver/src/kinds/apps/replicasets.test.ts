import { describe, expect, it } from 'vitest';
import type { ReplicaSet } from '@skiff/api';
import { defaultReplicaSet, validateReplicaSet } from './replicasets.js';

describe('validateReplicaSet', () => {
  const replicaSet = (mutate: (r: ReplicaSet) => void = () => {}): ReplicaSet => {
    const r = {
      metadata: { name: 'web-abc', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'web', 'pod-template-hash': 'abc' } },
        template: { metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
      },
    } as ReplicaSet;
    mutate(r);
    defaultReplicaSet(r);
    return r;
  };

  it('accepts a defaulted replica set and applies the deployment rules', () => {
    expect(validateReplicaSet(replicaSet())).toEqual([]);
    const bad = replicaSet((r) => {
      r.spec.replicas = -2;
      r.spec.template.spec.activeDeadlineSeconds = 10;
    });
    expect(validateReplicaSet(bad).map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.replicas: Invalid value: -2: must be greater than or equal to 0',
      'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
    ]);
  });

  it('keeps the selector immutable and checks status counts', () => {
    const old = replicaSet();
    const next = structuredClone(old);
    next.spec.selector = { matchLabels: { app: 'web' } };
    next.status = { replicas: 1, fullyLabeledReplicas: 3 };
    expect(validateReplicaSet(next, old).map((c) => c.field)).toEqual(['spec.selector', 'status.fullyLabeledReplicas']);
  });
});

describe('defaultReplicaSet', () => {
  const template = () => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } });

  it('defaults a replica set to one replica', () => {
    const replicaSet = { metadata: { name: 'web-1' }, spec: { template: template() } } as unknown as ReplicaSet;
    defaultReplicaSet(replicaSet);
    expect(replicaSet.spec.replicas).toBe(1);
    expect(replicaSet.spec.template.spec.terminationGracePeriodSeconds).toBe(30);
  });
});
