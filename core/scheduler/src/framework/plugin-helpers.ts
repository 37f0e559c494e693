import type { Pod } from '@skiff/api';
import type { ClonableStateData, CycleState, SchedulingStatus } from '@skiff/kernel';

/** The highest score a plugin gives a node (upstream's framework.MaxNodeScore). */
export const MAX_NODE_SCORE = 100;

/**
 * Scales scores so the highest becomes MAX_NODE_SCORE (integer division, as upstream's
 * DefaultNormalizeScore); with `reverse`, a high raw score becomes a low one (fewer bad things = better).
 * All zero stays all zero, or all MAX_NODE_SCORE when reversed.
 */
export function defaultNormalizeScore(scores: Map<string, number>, reverse = false, maxScore = MAX_NODE_SCORE): void {
  let max = 0;
  for (const value of scores.values()) if (value > max) max = value;
  if (max === 0) {
    if (reverse) for (const name of scores.keys()) scores.set(name, maxScore);
    return;
  }
  for (const [name, value] of scores) {
    const scaled = Math.trunc((maxScore * value) / max);
    scores.set(name, reverse ? maxScore - scaled : scaled);
  }
}

function isClonable(value: unknown): value is ClonableStateData {
  return typeof value === 'object' && value !== null && typeof (value as ClonableStateData).clone === 'function';
}

/** A copy of a cycle state for a simulation: values with `clone()` are cloned, the rest shared. */
export function cloneCycleState(state: CycleState): CycleState {
  const copy: CycleState = new Map();
  for (const [key, value] of state) copy.set(key, isClonable(value) ? value.clone() : value);
  return copy;
}

/** A pod's priority as the scheduler orders and preempts by it (spec.priority, 0 when unset). */
export function podPriority(pod: Pod): number {
  return pod.spec.priority ?? 0;
}

/** A rejection that no other pod's removal can fix (preemption skips such nodes). */
export function unresolvable(...reasons: string[]): NonNullable<SchedulingStatus> {
  return { code: 'UnschedulableAndUnresolvable', reasons };
}

/** A rejection that removing pods (preemption) or a cluster change might fix. */
export function unschedulable(...reasons: string[]): NonNullable<SchedulingStatus> {
  return { code: 'Unschedulable', reasons };
}
