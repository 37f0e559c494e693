import type { DeploymentCondition, DeploymentStatus } from '@skiff/api';
import { kubeTime } from '@skiff/controller-manager';

export function newCondition(type: string, status: DeploymentCondition['status'], reason: string, message: string, now: number): DeploymentCondition {
  const time = kubeTime(now);
  return { type, status, lastUpdateTime: time, lastTransitionTime: time, reason, message };
}

export function getCondition(status: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined {
  return status?.conditions?.find((condition) => condition.type === type);
}

/**
 * Puts `condition` into `status`, like Kubernetes' SetDeploymentCondition: a condition with the same
 * status and reason is left as it is; one with the same status keeps its lastTransitionTime.
 */
export function setCondition(status: DeploymentStatus, condition: DeploymentCondition): DeploymentStatus {
  const current = getCondition(status, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return status;
  const next = current && current.status === condition.status ? { ...{}, ...condition, lastTransitionTime: current.lastTransitionTime } : condition;
  return { ...{}, ...status, conditions: [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next] };
}

export function removeCondition(status: DeploymentStatus, type: string): DeploymentStatus {
  if (!getCondition(status, type)) return status;
  const next: DeploymentStatus = { ...{}, ...status, conditions: status.conditions!.filter((condition) => condition.type !== type) };
  if (next.conditions!.length === 0) delete next.conditions;
  return next;
}
