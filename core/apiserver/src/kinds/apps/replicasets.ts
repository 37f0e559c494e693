// apps/v1 ReplicaSets: their defaults, their validation (the Deployment rules for selector, template and
// status) and the kind.
import { defineKind, RESOURCES, type ReplicaSet, type ReplicaSetSpec, type ReplicaSetStatus, type StatusCause } from '@skiff/api';
import {
  defaultPodTemplate,
  goLabelSelector,
  semanticEqual,
  validateImmutable,
  validateNonnegative,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '@skiff/api/validation';
import { AGE_COLUMN, column, computed, templateColumns } from '../columns.js';
import { selectorField } from '../field-selectors.js';
import { APPS_META_RULES, REPLICAS_SCALE, validateReplicaCounts, validateSelectorAndTemplate } from './replica-rules.js';

/** One replica and the template's defaults. Defaults run before validation, so the spec may still be missing. */
export function defaultReplicaSet(replicaSet: { spec?: Partial<ReplicaSetSpec> }): void {
  const spec = (replicaSet.spec ??= {});
  spec.replicas ??= 1;
  defaultPodTemplate(spec.template);
}

function validateReplicaSetSpec(spec: Partial<ReplicaSetSpec> | undefined, field = 'spec'): StatusCause[] {
  return [
    ...validateNonnegative(spec?.replicas, `${field}.replicas`),
    ...validateNonnegative(spec?.minReadySeconds, `${field}.minReadySeconds`),
    ...validateSelectorAndTemplate(spec?.selector, spec?.template, field),
  ];
}

function validateReplicaSetStatus(status: ReplicaSetStatus | undefined, field = 'status'): StatusCause[] {
  return validateReplicaCounts(status ?? {}, ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'], field);
}

/** Create and update, under the Deployment rules for selector and status. */
export function validateReplicaSet(replicaSet: ReplicaSet, old?: ReplicaSet): StatusCause[] {
  const causes = [...validateObjectMeta(replicaSet.metadata, APPS_META_RULES), ...validateReplicaSetSpec(replicaSet.spec)];
  if (!old) return causes;
  causes.push(...validateObjectMetaUpdate(replicaSet.metadata, old.metadata));
  causes.push(...validateImmutable(replicaSet.spec?.selector, old.spec?.selector, 'spec.selector', goLabelSelector(replicaSet.spec?.selector)));
  if (!semanticEqual(replicaSet.status, old.status)) causes.push(...validateReplicaSetStatus(replicaSet.status));
  return causes;
}

export const replicaSets = defineKind<ReplicaSet>({
  ...{},
  ...RESOURCES.replicasets,
  subresources: ['status', 'scale'],
  scale: REPLICAS_SCALE,
  columns: [
    column('Desired', '.spec.replicas', { type: 'integer' }),
    computed('Current', (rs) => rs.status?.replicas ?? 0, { type: 'integer' }),
    computed('Ready', (rs) => rs.status?.readyReplicas ?? 0, { type: 'integer' }),
    AGE_COLUMN,
    ...templateColumns('.spec.template', '.spec.selector'),
  ],
  strategy: {
    defaults: defaultReplicaSet,
    validateAll: validateReplicaSet,
    prepareForCreate(rs) {
      rs.status = { replicas: 0 };
    },
    fieldSelectors: { 'status.replicas': selectorField((rs) => rs.status?.replicas ?? 0) },
  },
});
