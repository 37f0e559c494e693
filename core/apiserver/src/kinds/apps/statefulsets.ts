// apps/v1 StatefulSets: their defaults, their validation and the kind.
import { defineKind, RESOURCES, type StatefulSet, type StatefulSetSpec, type StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { AGE_COLUMN, computed, templateColumns } from '../columns.js';
import { REPLICAS_SCALE } from './replica-rules.js';
import { defaultWorkloadSpec, validateWorkload } from './workload-rules.js';

/** The StatefulSet spec fields an update may change; the rest is fixed at creation. */
const STATEFULSET_MUTABLE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'minReadySeconds',
  'persistentVolumeClaimRetentionPolicy',
  'revisionHistoryLimit',
];

/** Defaults run before validation, so the spec may still be missing or incomplete. */
function defaultStatefulSet(sts: { spec?: Partial<StatefulSetSpec> }): void {
  const spec = (sts.spec ??= {});
  defaultWorkloadSpec(spec);
  spec.replicas ??= 1;
  spec.podManagementPolicy ??= 'OrderedReady';
  spec.updateStrategy ??= { type: 'RollingUpdate' };
  if (spec.updateStrategy.type === 'RollingUpdate') spec.updateStrategy.rollingUpdate ??= { partition: 0 };
  spec.persistentVolumeClaimRetentionPolicy ??= { whenDeleted: 'Retain', whenScaled: 'Retain' };
}

/**
 * The StatefulSet controller mounts each claim template as a volume of the template's name, so the
 * containers' volumeMounts may name them: validate the template as its pods will have it.
 */
function withClaimVolumes(sts: StatefulSet): StatefulSet {
  const claims = sts.spec?.volumeClaimTemplates ?? [];
  const podSpec = sts.spec?.template?.spec;
  if (claims.length === 0 || !podSpec) return sts;
  const volumes = podSpec.volumes ?? [];
  const named = new Set(volumes.map((volume) => volume.name));
  const claimVolumes = claims
    .map((claim) => claim.metadata?.name)
    .filter((name): name is string => typeof name === 'string' && name !== '' && !named.has(name))
    .map((name) => ({ name, persistentVolumeClaim: { claimName: name } }));
  return {
    ...{},
    ...sts,
    spec: { ...{}, ...sts.spec, template: { ...{}, ...sts.spec.template, spec: { ...{}, ...podSpec, volumes: [...volumes, ...claimVolumes] } } },
  };
}

/** The spec fields an update may not change, in a comparable form. */
const fixedFields = (sts: StatefulSet) =>
  JSON.stringify(
    Object.entries(sts.spec ?? {})
      .filter(([key]) => !STATEFULSET_MUTABLE.includes(key))
      .sort(([a], [b]) => a.localeCompare(b)),
  );

function validateStatefulSet(sts: StatefulSet, old?: StatefulSet): StatusCause[] {
  const causes = validateWorkload(withClaimVolumes(sts), old);
  if (old && fixedFields(sts) !== fixedFields(old)) {
    causes.push(
      fieldErrors.forbidden(
        'spec',
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
  }
  return causes;
}

export const statefulSets = defineKind<StatefulSet>({
  ...{},
  ...RESOURCES.statefulsets,
  subresources: ['status', 'scale'],
  scale: REPLICAS_SCALE,
  columns: [computed('Ready', (s) => `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 0}`), AGE_COLUMN, ...templateColumns('.spec.template')],
  strategy: {
    defaults: defaultStatefulSet,
    prepareForCreate(sts) {
      sts.status = { replicas: 0, availableReplicas: 0 };
    },
    validate: validateStatefulSet,
  },
});
