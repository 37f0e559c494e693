import type { Pod } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { isPodActive } from './active-pods.js';

const pod = (phase?: NonNullable<Pod['status']>['phase'], deleting = false): Pod =>
  ({ metadata: { name: 'p', ...(deleting && { deletionTimestamp: '2024-01-01T00:00:00Z' }) }, spec: { containers: [] }, status: { phase } }) as Pod;

describe('isPodActive', () => {
  it('counts pods that are neither finished nor being deleted', () => {
    expect(isPodActive(pod('Pending'))).toBe(true);
    expect(isPodActive(pod('Running'))).toBe(true);
    expect(isPodActive(pod())).toBe(true);
    expect(isPodActive(pod('Succeeded'))).toBe(false);
    expect(isPodActive(pod('Failed'))).toBe(false);
    expect(isPodActive(pod('Running', true))).toBe(false);
  });
});
