import { describe, expect, it } from 'vitest';
import type { Lease } from '@skiff/api';
import { validateLease } from './coordination.js';

const messages = (causes: { field?: string; message?: string }[]) => causes.map((c) => `${c.field}: ${c.message}`);

describe('validateLease', () => {
  it('checks the lease duration and transitions', () => {
    const lease: Lease = { metadata: { name: 'kube-scheduler', namespace: 'kube-system' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } };
    expect(validateLease(lease)).toEqual([]);
    lease.spec = { leaseDurationSeconds: 0, leaseTransitions: -1 };
    expect(messages(validateLease(lease))).toEqual([
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
});
