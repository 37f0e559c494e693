import type { APIService, APIServiceCondition } from '@skiff/api';

/** The Available condition of a local APIService (one without a service), as kube-aggregator writes it. */
export const LOCAL_CONDITION = Object.freeze({ status: 'True', reason: 'Local', message: 'Local APIServices are always available' });
export const PASSED_CONDITION = Object.freeze({ status: 'True', reason: 'Passed', message: 'all checks passed' });

export type Availability = Pick<APIServiceCondition, 'status' | 'reason' | 'message'> & { status: 'True' | 'False' | 'Unknown' };

/**
 * The APIService's conditions with Available set to `availability`: the transition time moves only when the
 * status changes. Undefined when nothing would change (no write needed).
 */
export function withAvailability(apiService: APIService, availability: Availability, now: Date): APIServiceCondition[] | undefined {
  const conditions = apiService.status?.conditions ?? [];
  const current = conditions.find((condition) => condition.type === 'Available');
  if (current && current.status === availability.status && current.reason === availability.reason && current.message === availability.message) return undefined;
  const lastTransitionTime =
    current && current.status === availability.status && current.lastTransitionTime ? current.lastTransitionTime : now.toISOString().replace(/\.\d+Z$/, 'Z');
  const next: APIServiceCondition = {
    type: 'Available',
    status: availability.status,
    lastTransitionTime,
    reason: availability.reason,
    message: availability.message,
  };
  return current ? conditions.map((condition) => (condition === current ? next : condition)) : [...conditions, next];
}
