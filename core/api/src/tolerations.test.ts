import { describe, expect, it } from 'vitest';
import { toleratesTaint } from './tolerations.js';

describe('toleratesTaint', () => {
  it('matches taints as Kubernetes does', () => {
    const taint = { key: 'k', value: 'v', effect: 'NoSchedule' };
    expect(toleratesTaint({ operator: 'Exists' }, taint)).toBe(true);
    expect(toleratesTaint({ key: 'k', operator: 'Exists' }, taint)).toBe(true);
    expect(toleratesTaint({ key: 'k', operator: 'Exists', effect: 'NoExecute' }, taint)).toBe(false);
    expect(toleratesTaint({ key: 'k', value: 'v' }, taint)).toBe(true);
    expect(toleratesTaint({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, taint)).toBe(true);
    expect(toleratesTaint({ key: 'k', value: 'w' }, taint)).toBe(false);
    expect(toleratesTaint({ key: 'other', operator: 'Exists' }, taint)).toBe(false);
    expect(toleratesTaint({ value: 'v' }, taint)).toBe(false);
    expect(toleratesTaint({ key: 'k' }, { key: 'k', effect: 'NoSchedule' })).toBe(true);
  });
});
