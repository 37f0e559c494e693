import type { Pod, PodDisruptionBudget } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { pickCandidate, splitByPdbViolation, type Candidate } from './preemption.js';

function victim(name: string, priority: number, startTime?: string, labels: Record<string, string> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [], priority },
    status: startTime ? { startTime } : {},
  };
}

const candidate = (nodeName: string, victims: Pod[], pdbViolations = 0): Candidate => ({ nodeName, victims, pdbViolations });

describe('pickCandidate (upstream’s pickOneNodeForPreemption)', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  it('takes the fewest PDB violations first', () => {
    expect(pickCandidate([candidate('a', [victim('x', 1)], 1), candidate('b', [victim('y', 9), victim('z', 9)], 0)], now)?.nodeName).toBe('b');
  });
  it('then the lowest highest-priority victim', () => {
    expect(pickCandidate([candidate('a', [victim('x', 5)]), candidate('b', [victim('y', 3), victim('z', 3)])], now)?.nodeName).toBe('b');
  });
  it('then the smallest sum of priorities, counting negative ones as above zero', () => {
    expect(pickCandidate([candidate('a', [victim('x', 3), victim('w', 2)]), candidate('b', [victim('y', 3), victim('z', 1)])], now)?.nodeName).toBe('b');
    expect(pickCandidate([candidate('a', [victim('x', -5), victim('w', -5)]), candidate('b', [victim('y', -5)])], now)?.nodeName).toBe('b');
  });
  it('then the latest start among the highest-priority victims, then the first', () => {
    const early = victim('x', 3, '2026-01-01T08:00:00Z');
    const late = victim('y', 3, '2026-01-01T10:00:00Z');
    expect(pickCandidate([candidate('a', [early]), candidate('b', [late])], now)?.nodeName).toBe('b');
    expect(pickCandidate([candidate('a', [late]), candidate('b', [victim('z', 3, '2026-01-01T10:00:00Z')])], now)?.nodeName).toBe('a');
  });
});

describe('splitByPdbViolation', () => {
  const budget = (allowed: number, disruptedPods?: Record<string, string>): PodDisruptionBudget => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'web' } } },
    status: { disruptionsAllowed: allowed, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, ...(disruptedPods ? { disruptedPods } : {}) },
  });
  const web1 = victim('web-1', 1, undefined, { app: 'web' });
  const web2 = victim('web-2', 1, undefined, { app: 'web' });
  const other = victim('other', 1, undefined, { app: 'db' });

  it('counts down the budget in order: the pods past it violate it, others never do', () => {
    expect(splitByPdbViolation([web1, other, web2], [budget(1)])).toEqual({ violating: [web2], nonViolating: [web1, other] });
  });
  it('does not count a pod the budget already lists as disrupted', () => {
    expect(splitByPdbViolation([web1, web2], [budget(1, { 'web-1': '2026-01-01T00:00:00Z' })])).toEqual({ violating: [], nonViolating: [web1, web2] });
  });
});
