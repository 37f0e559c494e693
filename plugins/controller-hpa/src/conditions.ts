import type { HorizontalPodAutoscalerCondition } from '@skiff/api';
import { kubeTime } from '@skiff/controller-manager';
import { CONDITION } from './names.js';

const ORDER: readonly string[] = [CONDITION.ABLE_TO_SCALE, CONDITION.SCALING_ACTIVE, CONDITION.SCALING_LIMITED];

/**
 * Sets a condition in `conditions`: reason and message always, the transition time only when the status
 * changes (or the condition is new). Kept in a stable order: AbleToScale, ScalingActive, ScalingLimited.
 */
export function setCondition(
  conditions: HorizontalPodAutoscalerCondition[],
  type: string,
  status: boolean,
  reason: string,
  message: string,
  now: number,
): HorizontalPodAutoscalerCondition[] {
  const value = status ? 'True' : 'False';
  const existing = conditions.find((condition) => condition.type === type);
  const lastTransitionTime = existing && existing.status === value && existing.lastTransitionTime ? existing.lastTransitionTime : kubeTime(now);
  const next = [...conditions.filter((condition) => condition.type !== type), { type, status: value, lastTransitionTime, reason, message }];
  const rank = (condition: HorizontalPodAutoscalerCondition) => (ORDER.includes(condition.type) ? ORDER.indexOf(condition.type) : ORDER.length);
  return next.sort((a, b) => rank(a) - rank(b));
}
