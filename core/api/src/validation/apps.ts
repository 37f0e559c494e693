// Deployments and ReplicaSets (apps/v1): selector, template and replica counts.
import { labelSelectorFromObject, type LabelSelectorMatcher } from '../labels.js';
import type { Deployment, DeploymentSpec, DeploymentStatus, LabelSelector, PodTemplateSpec, ReplicaSet, ReplicaSetStatus, StatusCause } from '../types.js';
import { semanticEqual } from './equality.js';
import { child, forbidden, goStringMap, invalid, notSupported, required, validateNonnegative, validatePositive } from './field.js';
import { validateImmutable, validateObjectMeta, validateObjectMetaUpdate } from './meta.js';
import { isValidPercent, nameIsDNSSubdomain } from './names.js';
import { validatePodTemplateSpec } from './pod.js';
import { goLabelSelector, isEmptySelector, validateLabelSelector } from './selector.js';

const META_RULES = { namespaced: true, name: nameIsDNSSubdomain };

/** The selector as Kubernetes compiles it, or undefined when it cannot be compiled. */
function compile(selector: LabelSelector | undefined): LabelSelectorMatcher | undefined {
  try {
    return labelSelectorFromObject(selector);
  } catch {
    return undefined;
  }
}

/** Selector required, valid and non-empty; the template valid and matched by it (shared by both kinds). */
function validateSelectorAndTemplate(selector: LabelSelector | undefined, template: PodTemplateSpec | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const selectorPath = child(field, 'selector');
  if (!selector) {
    causes.push(required(selectorPath));
  } else {
    causes.push(...validateLabelSelector(selector, selectorPath));
    // Kubernetes says "deployment" here for ReplicaSets too.
    if (isEmptySelector(selector)) causes.push(invalid(selectorPath, goLabelSelector(selector), 'empty selector is invalid for deployment'));
  }
  const matcher = compile(selector);
  if (!matcher) {
    causes.push(invalid(selectorPath, goLabelSelector(selector), 'invalid label selector'));
    return causes;
  }
  const templatePath = child(field, 'template');
  const labels = template?.metadata?.labels;
  // A missing selector matches nothing, so it is also reported as not matching the template.
  if (!matcher.empty && !matcher.matches(labels)) {
    causes.push(invalid(child(templatePath, 'metadata', 'labels'), goStringMap(labels), '`selector` does not match template `labels`'));
  }
  causes.push(...validatePodTemplateSpec(template, templatePath));
  const restartPolicy = template?.spec?.restartPolicy ?? '';
  if (restartPolicy !== 'Always') causes.push(notSupported(child(templatePath, 'spec', 'restartPolicy'), restartPolicy, ['Always']));
  if (template?.spec?.activeDeadlineSeconds !== undefined) {
    causes.push(forbidden(child(templatePath, 'spec', 'activeDeadlineSeconds'), 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return causes;
}

const intOrPercentValue = (value: number | string | undefined): number =>
  typeof value === 'string' ? (isValidPercent(value).length ? -1 : Number.parseInt(value, 10)) : (value ?? 0);

function validatePositiveIntOrPercent(value: number | string | undefined, field: string): StatusCause[] {
  if (typeof value === 'string') return isValidPercent(value).map((message) => invalid(field, value, message));
  return validateNonnegative(value, field);
}

function validateStrategy(strategy: DeploymentSpec['strategy'], field: string): StatusCause[] {
  const type = strategy?.type ?? '';
  if (type === 'Recreate') {
    return strategy?.rollingUpdate ? [forbidden(child(field, 'rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'")] : [];
  }
  if (type !== 'RollingUpdate') return [notSupported(child(field, 'type'), type, ['Recreate', 'RollingUpdate'])];
  const rollingUpdate = strategy?.rollingUpdate;
  const path = child(field, 'rollingUpdate');
  if (!rollingUpdate) return [required(path, 'this should be defaulted and never be nil')];
  const unavailablePath = child(path, 'maxUnavailable');
  const causes = [
    ...validatePositiveIntOrPercent(rollingUpdate.maxUnavailable, unavailablePath),
    ...validatePositiveIntOrPercent(rollingUpdate.maxSurge, child(path, 'maxSurge')),
  ];
  if (intOrPercentValue(rollingUpdate.maxUnavailable) === 0 && intOrPercentValue(rollingUpdate.maxSurge) === 0) {
    causes.push(invalid(unavailablePath, rollingUpdate.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
  }
  if (typeof rollingUpdate.maxUnavailable === 'string' && intOrPercentValue(rollingUpdate.maxUnavailable) > 100) {
    causes.push(invalid(unavailablePath, rollingUpdate.maxUnavailable, 'must not be greater than 100%'));
  }
  return causes;
}

export function validateDeploymentSpec(spec: DeploymentSpec | undefined, field = 'spec'): StatusCause[] {
  const s = spec ?? ({} as Partial<DeploymentSpec>);
  const causes = [
    ...validateNonnegative(s.replicas, child(field, 'replicas')),
    ...validateSelectorAndTemplate(s.selector, s.template, field),
    ...validateStrategy(s.strategy, child(field, 'strategy')),
    ...validateNonnegative(s.minReadySeconds, child(field, 'minReadySeconds')),
    ...validateNonnegative(s.revisionHistoryLimit, child(field, 'revisionHistoryLimit')),
  ];
  if (s.progressDeadlineSeconds !== undefined) {
    const path = child(field, 'progressDeadlineSeconds');
    causes.push(...validatePositive(s.progressDeadlineSeconds, path));
    if (s.progressDeadlineSeconds <= (s.minReadySeconds ?? 0)) causes.push(invalid(path, s.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
  }
  return causes;
}

function validateReplicaCounts(status: Record<string, number | undefined>, counts: string[], field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const name of ['observedGeneration', 'replicas', ...counts, 'collisionCount']) causes.push(...validateNonnegative(status[name], child(field, name)));
  const replicas = status.replicas ?? 0;
  for (const name of counts) {
    if (name !== 'unavailableReplicas' && (status[name] ?? 0) > replicas)
      causes.push(invalid(child(field, name), status[name], 'cannot be greater than status.replicas'));
  }
  if ((status.availableReplicas ?? 0) > (status.readyReplicas ?? 0)) {
    causes.push(invalid(child(field, 'availableReplicas'), status.availableReplicas, 'cannot be greater than readyReplicas'));
  }
  return causes;
}

export function validateDeploymentStatus(status: DeploymentStatus | undefined, field = 'status'): StatusCause[] {
  const counts = ['updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'];
  return validateReplicaCounts({ ...status } as Record<string, number | undefined>, counts, field);
}

export function validateReplicaSetStatus(status: ReplicaSetStatus | undefined, field = 'status'): StatusCause[] {
  const counts = ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'];
  return validateReplicaCounts({ ...status } as Record<string, number | undefined>, counts, field);
}

/**
 * Deployment create and update. Status is checked only when it changed, since only the status
 * subresource may change it; the selector is immutable in apps/v1.
 */
export function validateDeployment(deployment: Deployment, old?: Deployment): StatusCause[] {
  const causes = [...validateObjectMeta(deployment.metadata, META_RULES), ...validateDeploymentSpec(deployment.spec)];
  if (!old) return causes;
  causes.push(...validateObjectMetaUpdate(deployment.metadata, old.metadata));
  causes.push(...validateImmutable(deployment.spec?.selector, old.spec?.selector, 'spec.selector', goLabelSelector(deployment.spec?.selector)));
  if (!semanticEqual(deployment.status, old.status)) causes.push(...validateDeploymentStatus(deployment.status));
  return causes;
}

export function validateReplicaSetSpec(spec: ReplicaSet['spec'] | undefined, field = 'spec'): StatusCause[] {
  return [
    ...validateNonnegative(spec?.replicas, child(field, 'replicas')),
    ...validateNonnegative(spec?.minReadySeconds, child(field, 'minReadySeconds')),
    ...validateSelectorAndTemplate(spec?.selector, spec?.template, field),
  ];
}

/** ReplicaSet create and update, with the same status and selector rules as Deployments. */
export function validateReplicaSet(replicaSet: ReplicaSet, old?: ReplicaSet): StatusCause[] {
  const causes = [...validateObjectMeta(replicaSet.metadata, META_RULES), ...validateReplicaSetSpec(replicaSet.spec)];
  if (!old) return causes;
  causes.push(...validateObjectMetaUpdate(replicaSet.metadata, old.metadata));
  causes.push(...validateImmutable(replicaSet.spec?.selector, old.spec?.selector, 'spec.selector', goLabelSelector(replicaSet.spec?.selector)));
  if (!semanticEqual(replicaSet.status, old.status)) causes.push(...validateReplicaSetStatus(replicaSet.status));
  return causes;
}
