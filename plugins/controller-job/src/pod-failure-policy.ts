import type { Pod, PodFailurePolicy, PodFailurePolicyRule } from '@skiff/api';

/** The first rule a failed pod matches, with the message a FailJob rule gives the Job. */
export interface MatchedRule {
  action: PodFailurePolicyRule['action'];
  message: string;
}

function exitCodeMatch(pod: Pod, rule: PodFailurePolicyRule, index: number): string | undefined {
  const { containerName, operator, values } = rule.onExitCodes!;
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const status of statuses) {
    if (containerName !== undefined && status.name !== containerName) continue;
    const exitCode = status.state?.terminated?.exitCode;
    if (exitCode === undefined || exitCode === 0) continue;
    if (values.includes(exitCode) === (operator === 'In'))
      return `Container ${status.name} for pod ${pod.metadata.namespace}/${pod.metadata.name} failed with exit code ${exitCode} matching ${rule.action} rule at index ${index}`;
  }
  return undefined;
}

function conditionMatch(pod: Pod, rule: PodFailurePolicyRule, index: number): string | undefined {
  for (const pattern of rule.onPodConditions ?? []) {
    const condition = pod.status?.conditions?.find((c) => c.type === pattern.type);
    if (condition && condition.status === (pattern.status ?? 'True'))
      return `Pod ${pod.metadata.namespace}/${pod.metadata.name} has condition ${pattern.type} matching ${rule.action} rule at index ${index}`;
  }
  return undefined;
}

/** The first rule of the policy a failed pod matches, in order; undefined when none does (it counts). */
export function matchPodFailurePolicy(policy: PodFailurePolicy | undefined, pod: Pod): MatchedRule | undefined {
  for (const [index, rule] of (policy?.rules ?? []).entries()) {
    const message = rule.onExitCodes ? exitCodeMatch(pod, rule, index) : conditionMatch(pod, rule, index);
    if (message) return { action: rule.action, message };
  }
  return undefined;
}
