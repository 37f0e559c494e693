import { describe, expect, it } from 'vitest';
import { isPodAvailable, isPodReady, isPodTerminal, podReadyCondition } from './pod-state.js';
import type { Pod, PodCondition } from './types.js';

const NOW = Date.parse('2024-01-01T00:10:00Z');
const pod = (status: Pod['status'] = {}): Pod => ({ metadata: { name: 'p' }, spec: { containers: [] }, status }) as Pod;
const ready = (status: PodCondition['status'], lastTransitionTime?: string): PodCondition => ({
  type: 'Ready',
  status,
  ...(lastTransitionTime && { lastTransitionTime }),
});

describe('pod state', () => {
  it('is terminal once Succeeded or Failed', () => {
    expect(isPodTerminal(pod({ phase: 'Succeeded' }))).toBe(true);
    expect(isPodTerminal(pod({ phase: 'Failed' }))).toBe(true);
    for (const phase of ['Pending', 'Running', 'Unknown', undefined] as const) expect(isPodTerminal(pod({ phase }))).toBe(false);
    expect(isPodTerminal({ metadata: {}, spec: { containers: [] } } as Pod)).toBe(false);
  });

  it('is ready when its (first) Ready condition is True', () => {
    expect(isPodReady(pod({ conditions: [{ type: 'PodScheduled', status: 'True' }, ready('True')] }))).toBe(true);
    expect(isPodReady(pod({ conditions: [ready('False')] }))).toBe(false);
    expect(isPodReady(pod({ conditions: [{ type: 'ContainersReady', status: 'True' }] }))).toBe(false);
    expect(isPodReady(pod())).toBe(false);
    expect(podReadyCondition(pod({ conditions: [ready('True', '2024-01-01T00:00:00Z')] }))?.lastTransitionTime).toBe('2024-01-01T00:00:00Z');
  });

  it('is available once ready for minReadySeconds', () => {
    expect(isPodAvailable(pod({ conditions: [ready('True')] }), 0, NOW)).toBe(true);
    expect(isPodAvailable(pod({ conditions: [ready('True')] }), 5, NOW)).toBe(false);
    expect(isPodAvailable(pod({ conditions: [ready('True', '2024-01-01T00:09:00Z')] }), 59, NOW)).toBe(true);
    expect(isPodAvailable(pod({ conditions: [ready('True', '2024-01-01T00:09:00Z')] }), 60, NOW)).toBe(false);
    expect(isPodAvailable(pod({ conditions: [ready('False', '2024-01-01T00:00:00Z')] }), 0, NOW)).toBe(false);
  });
});
