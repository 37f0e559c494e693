// apps/v1 Deployments: their defaults, their validation and the kind.
import { defineKind, RESOURCES, type Deployment, type DeploymentSpec, type DeploymentStatus, type DeploymentStrategy, type StatusCause } from '@skiff/api';
import {
  defaultPodTemplate,
  fieldErrors,
  goLabelSelector,
  isValidPercent,
  semanticEqual,
  validateImmutable,
  validateNonnegative,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validatePositive,
} from '@skiff/api/validation';
import { AGE_COLUMN, computed, templateColumns } from '../columns.js';
import { APPS_META_RULES, REPLICAS_SCALE, validateReplicaCounts, validateSelectorAndTemplate } from './replica-rules.js';

/**
 * One replica, a 25%/25% rolling update, 10 old ReplicaSets kept, 600s to progress. Defaults run before
 * validation, so the spec may still be missing or incomplete.
 */
export function defaultDeployment(deployment: { spec?: Partial<DeploymentSpec> }): void {
  const spec = (deployment.spec ??= {});
  spec.replicas ??= 1;
  const strategy = (spec.strategy ??= {});
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const rollingUpdate = (strategy.rollingUpdate ??= {});
    // An empty int-or-string counts as unset (Go's zero value); 0 is a value.
    if ((rollingUpdate.maxUnavailable ?? '') === '') rollingUpdate.maxUnavailable = '25%';
    if ((rollingUpdate.maxSurge ?? '') === '') rollingUpdate.maxSurge = '25%';
  }
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  defaultPodTemplate(spec.template);
}

const intOrPercentValue = (value: number | string | undefined): number =>
  typeof value === 'string' ? (isValidPercent(value).length ? -1 : Number.parseInt(value, 10)) : (value ?? 0);

function validatePositiveIntOrPercent(value: number | string | undefined, field: string): StatusCause[] {
  if (typeof value === 'string') return isValidPercent(value).map((message) => fieldErrors.invalid(field, value, message));
  return validateNonnegative(value, field);
}

function validateStrategy(strategy: DeploymentStrategy | undefined, field: string): StatusCause[] {
  const type = strategy?.type ?? '';
  if (type === 'Recreate') {
    return strategy?.rollingUpdate ? [fieldErrors.forbidden(`${field}.rollingUpdate`, "may not be specified when strategy `type` is 'Recreate'")] : [];
  }
  if (type !== 'RollingUpdate') return [fieldErrors.notSupported(`${field}.type`, type, ['Recreate', 'RollingUpdate'])];
  const rollingUpdate = strategy?.rollingUpdate;
  const path = `${field}.rollingUpdate`;
  if (!rollingUpdate) return [fieldErrors.required(path, 'this should be defaulted and never be nil')];
  const unavailablePath = `${path}.maxUnavailable`;
  const causes = [
    ...validatePositiveIntOrPercent(rollingUpdate.maxUnavailable, unavailablePath),
    ...validatePositiveIntOrPercent(rollingUpdate.maxSurge, `${path}.maxSurge`),
  ];
  if (intOrPercentValue(rollingUpdate.maxUnavailable) === 0 && intOrPercentValue(rollingUpdate.maxSurge) === 0) {
    causes.push(fieldErrors.invalid(unavailablePath, rollingUpdate.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
  }
  if (typeof rollingUpdate.maxUnavailable === 'string' && intOrPercentValue(rollingUpdate.maxUnavailable) > 100) {
    causes.push(fieldErrors.invalid(unavailablePath, rollingUpdate.maxUnavailable, 'must not be greater than 100%'));
  }
  return causes;
}

function validateDeploymentSpec(spec: Partial<DeploymentSpec> | undefined, field = 'spec'): StatusCause[] {
  const s: Partial<DeploymentSpec> = spec ?? {};
  const causes = [
    ...validateNonnegative(s.replicas, `${field}.replicas`),
    ...validateSelectorAndTemplate(s.selector, s.template, field),
    ...validateStrategy(s.strategy, `${field}.strategy`),
    ...validateNonnegative(s.minReadySeconds, `${field}.minReadySeconds`),
    ...validateNonnegative(s.revisionHistoryLimit, `${field}.revisionHistoryLimit`),
  ];
  if (s.progressDeadlineSeconds !== undefined) {
    const path = `${field}.progressDeadlineSeconds`;
    causes.push(...validatePositive(s.progressDeadlineSeconds, path));
    if (s.progressDeadlineSeconds <= (s.minReadySeconds ?? 0))
      causes.push(fieldErrors.invalid(path, s.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
  }
  return causes;
}

function validateDeploymentStatus(status: DeploymentStatus | undefined, field = 'status'): StatusCause[] {
  return validateReplicaCounts(status ?? {}, ['updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'], field);
}

/**
 * Create and update. Status is checked only when it changed, since only the status subresource may
 * change it; the selector is immutable in apps/v1.
 */
export function validateDeployment(deployment: Deployment, old?: Deployment): StatusCause[] {
  const causes = [...validateObjectMeta(deployment.metadata, APPS_META_RULES), ...validateDeploymentSpec(deployment.spec)];
  if (!old) return causes;
  causes.push(...validateObjectMetaUpdate(deployment.metadata, old.metadata));
  causes.push(...validateImmutable(deployment.spec?.selector, old.spec?.selector, 'spec.selector', goLabelSelector(deployment.spec?.selector)));
  if (!semanticEqual(deployment.status, old.status)) causes.push(...validateDeploymentStatus(deployment.status));
  return causes;
}

export const deployments = defineKind<Deployment>({
  ...{},
  ...RESOURCES.deployments,
  subresources: ['status', 'scale'],
  // The controller's status writes may not relabel the deployment.
  keptOnStatusUpdate: ['labels'],
  scale: REPLICAS_SCALE,
  columns: [
    computed('Ready', (d) => `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`),
    computed('Up-to-date', (d) => d.status?.updatedReplicas ?? 0, { type: 'integer' }),
    computed('Available', (d) => d.status?.availableReplicas ?? 0, { type: 'integer' }),
    AGE_COLUMN,
    ...templateColumns('.spec.template', '.spec.selector'),
  ],
  strategy: { defaults: defaultDeployment, validateAll: validateDeployment },
});
