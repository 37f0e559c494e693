// apps/v1 DaemonSets: their defaults and the kind (validation is what StatefulSets share).
import { defineKind, RESOURCES, type DaemonSet, type DaemonSetSpec } from '@skiff/api';
import { AGE_COLUMN, column, computed, templateColumns } from '../columns.js';
import { defaultWorkloadSpec, validateWorkload } from './workload-rules.js';

/** Defaults run before validation, so the spec may still be missing or incomplete. */
function defaultDaemonSet(ds: { spec?: Partial<DaemonSetSpec> }): void {
  const spec = (ds.spec ??= {});
  defaultWorkloadSpec(spec);
  spec.updateStrategy ??= { type: 'RollingUpdate' };
  if (spec.updateStrategy.type === 'RollingUpdate') spec.updateStrategy.rollingUpdate ??= { maxUnavailable: 1, maxSurge: 0 };
}

export const daemonSets = defineKind<DaemonSet>({
  ...{},
  ...RESOURCES.daemonsets,
  subresources: ['status'],
  columns: [
    column('Desired', '.status.desiredNumberScheduled', { type: 'integer' }),
    column('Current', '.status.currentNumberScheduled', { type: 'integer' }),
    column('Ready', '.status.numberReady', { type: 'integer' }),
    column('Up-to-date', '.status.updatedNumberScheduled', { type: 'integer' }),
    column('Available', '.status.numberAvailable', { type: 'integer' }),
    computed(
      'Node Selector',
      (ds) =>
        Object.entries(ds.spec?.template?.spec?.nodeSelector ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(',') || '<none>',
    ),
    AGE_COLUMN,
    ...templateColumns('.spec.template', '.spec.selector'),
  ],
  strategy: {
    defaults: defaultDaemonSet,
    prepareForCreate(ds) {
      ds.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
    },
    validate: validateWorkload,
  },
});
