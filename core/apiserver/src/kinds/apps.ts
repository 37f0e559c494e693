// apps/v1: deployments, replica sets, stateful sets, daemon sets and controller revisions.
import {
  defaultDeployment,
  defaultPodTemplate,
  defaultReplicaSet,
  defineKind,
  fieldErrors,
  validateDeployment,
  validateImmutable,
  validateLabelSelector,
  validatePodTemplateSpec,
  validateReplicaSet,
  type Deployment,
  type KubeObject,
  type LabelSelector,
  type PodTemplateSpec,
  type ReplicaSet,
  type ResourceDefinition,
  type StatusCause,
} from '@skiff/api';
import { AGE_COLUMN, column, computed, templateColumns } from './columns.js';
import { selectorField } from './field-selectors.js';

const REPLICAS_SCALE = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' };

export const deployments = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  // The controller's status writes may not relabel the deployment.
  keptOnStatusUpdate: ['labels'],
  scale: REPLICAS_SCALE,
  columns: [
    computed<Deployment>('Ready', (d) => `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`),
    computed<Deployment>('Up-to-date', (d) => d.status?.updatedReplicas ?? 0, { type: 'integer' }),
    computed<Deployment>('Available', (d) => d.status?.availableReplicas ?? 0, { type: 'integer' }),
    AGE_COLUMN,
    ...templateColumns('.spec.template', '.spec.selector'),
  ],
  strategy: {
    defaults: (object) => defaultDeployment(object as Deployment),
    validateAll: (object, old) => validateDeployment(object as Deployment, old as Deployment | undefined),
  },
});

export const replicaSets = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  resource: 'replicasets',
  namespaced: true,
  shortNames: ['rs'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  keptOnStatusUpdate: ['labels'],
  scale: REPLICAS_SCALE,
  columns: [
    column('Desired', '.spec.replicas', { type: 'integer' }),
    computed<ReplicaSet>('Current', (rs) => rs.status?.replicas ?? 0, { type: 'integer' }),
    computed<ReplicaSet>('Ready', (rs) => rs.status?.readyReplicas ?? 0, { type: 'integer' }),
    AGE_COLUMN,
    ...templateColumns('.spec.template', '.spec.selector'),
  ],
  strategy: {
    defaults: (object) => defaultReplicaSet(object as ReplicaSet),
    validateAll: (object, old) => validateReplicaSet(object as ReplicaSet, old as ReplicaSet | undefined),
    prepareForCreate(object) {
      object.status = { replicas: 0 };
    },
    fieldSelectors: { 'status.replicas': selectorField<ReplicaSet>((rs) => rs.status?.replicas ?? 0) },
  },
});

type Workload = KubeObject & {
  spec?: {
    replicas?: number;
    selector?: LabelSelector;
    template?: PodTemplateSpec;
    updateStrategy?: { type?: string; rollingUpdate?: Record<string, unknown> };
    podManagementPolicy?: string;
    revisionHistoryLimit?: number;
    persistentVolumeClaimRetentionPolicy?: Record<string, string>;
    volumeClaimTemplates?: { metadata?: { name?: string } }[];
  };
  status?: Record<string, number | undefined>;
};

/** What workload kinds check the same way: a non-empty selector that matches the template's labels, and a valid template. */
function validateWorkload(workload: Workload, old: Workload | undefined): StatusCause[] {
  const spec = workload.spec ?? {};
  const causes: StatusCause[] = [];
  if (!spec.selector) causes.push(fieldErrors.required('spec.selector'));
  else {
    causes.push(...validateLabelSelector(spec.selector, 'spec.selector'));
    if (Object.keys(spec.selector.matchLabels ?? {}).length === 0 && (spec.selector.matchExpressions ?? []).length === 0) {
      causes.push(fieldErrors.invalid('spec.selector', spec.selector, 'empty selector is invalid for deployment'));
    }
    const labels = spec.template?.metadata?.labels ?? {};
    if (Object.entries(spec.selector.matchLabels ?? {}).some(([key, value]) => labels[key] !== value)) {
      causes.push(fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
    }
  }
  if ((spec.replicas ?? 0) < 0) causes.push(fieldErrors.invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  causes.push(...validatePodTemplateSpec(spec.template, 'spec.template'));
  if (old) causes.push(...validateImmutable(spec.selector, old.spec?.selector, 'spec.selector'));
  return causes;
}

function defaultWorkload(workload: Workload): NonNullable<Workload['spec']> {
  const spec = (workload.spec ??= {});
  spec.revisionHistoryLimit ??= 10;
  defaultPodTemplate(spec.template);
  return spec;
}

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

/**
 * The StatefulSet controller mounts each claim template as a volume of the template's name, so the
 * containers' volumeMounts may name them: validate the template as its pods will have it.
 */
function withClaimVolumes(sts: Workload): Workload {
  const claims = sts.spec?.volumeClaimTemplates ?? [];
  const podSpec = sts.spec?.template?.spec;
  if (claims.length === 0 || !podSpec) return sts;
  const volumes = podSpec.volumes ?? [];
  const named = new Set(volumes.map((volume) => volume.name));
  const claimVolumes = claims
    .map((claim) => claim.metadata?.name)
    .filter((name): name is string => typeof name === 'string' && name !== '' && !named.has(name))
    .map((name) => ({ name, persistentVolumeClaim: { claimName: name } }));
  return { ...sts, spec: { ...sts.spec, template: { ...sts.spec!.template!, spec: { ...podSpec, volumes: [...volumes, ...claimVolumes] } } } };
}

export const statefulSets = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  resource: 'statefulsets',
  namespaced: true,
  shortNames: ['sts'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  keptOnStatusUpdate: ['labels'],
  scale: REPLICAS_SCALE,
  columns: [computed<Workload>('Ready', (s) => `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 0}`), AGE_COLUMN, ...templateColumns('.spec.template')],
  strategy: {
    defaults(object) {
      const spec = defaultWorkload(object as Workload);
      spec.replicas ??= 1;
      spec.podManagementPolicy ??= 'OrderedReady';
      spec.updateStrategy ??= { type: 'RollingUpdate' };
      if (spec.updateStrategy.type === 'RollingUpdate') spec.updateStrategy.rollingUpdate ??= { partition: 0 };
      spec.persistentVolumeClaimRetentionPolicy ??= { whenDeleted: 'Retain', whenScaled: 'Retain' };
    },
    prepareForCreate(object) {
      object.status = { replicas: 0, availableReplicas: 0 };
    },
    validate(object, old) {
      const sts = object as Workload;
      const causes = validateWorkload(withClaimVolumes(sts), old as Workload | undefined);
      if (old) {
        const fixed = (w: Workload) =>
          JSON.stringify(
            Object.entries(w.spec ?? {})
              .filter(([key]) => !STATEFULSET_MUTABLE.includes(key))
              .sort(([a], [b]) => a.localeCompare(b)),
          );
        if (fixed(sts) !== fixed(old as Workload)) {
          causes.push(
            fieldErrors.forbidden(
              'spec',
              "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ),
          );
        }
      }
      return causes;
    },
  },
});

export const daemonSets = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  resource: 'daemonsets',
  namespaced: true,
  shortNames: ['ds'],
  categories: ['all'],
  subresources: ['status'],
  keptOnStatusUpdate: ['labels'],
  columns: [
    column('Desired', '.status.desiredNumberScheduled', { type: 'integer' }),
    column('Current', '.status.currentNumberScheduled', { type: 'integer' }),
    column('Ready', '.status.numberReady', { type: 'integer' }),
    column('Up-to-date', '.status.updatedNumberScheduled', { type: 'integer' }),
    column('Available', '.status.numberAvailable', { type: 'integer' }),
    computed<Workload>(
      'Node Selector',
      (ds) =>
        Object.entries((ds.spec?.template?.spec?.nodeSelector as Record<string, string> | undefined) ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(',') || '<none>',
    ),
    AGE_COLUMN,
    ...templateColumns('.spec.template', '.spec.selector'),
  ],
  strategy: {
    defaults(object) {
      const spec = defaultWorkload(object as Workload);
      spec.updateStrategy ??= { type: 'RollingUpdate' };
      if (spec.updateStrategy.type === 'RollingUpdate') spec.updateStrategy.rollingUpdate ??= { maxUnavailable: 1, maxSurge: 0 };
    },
    prepareForCreate(object) {
      object.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
    },
    validate: (object, old) => validateWorkload(object as Workload, old as Workload | undefined),
  },
});

type ControllerRevision = KubeObject & { revision?: number; data?: unknown };

export const controllerRevisions = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  resource: 'controllerrevisions',
  namespaced: true,
  columns: [
    computed<ControllerRevision>('Controller', (cr) => {
      const owner = cr.metadata.ownerReferences?.find((ref) => ref.controller);
      return owner ? `${owner.kind.toLowerCase()}.${owner.apiVersion.split('/')[0]}/${owner.name}` : '<none>';
    }),
    column('Revision', '.revision', { type: 'integer' }),
    AGE_COLUMN,
  ],
  strategy: {
    validate(object, old) {
      const cr = object as ControllerRevision;
      const causes: StatusCause[] = [];
      if ((cr.revision ?? 0) < 0) causes.push(fieldErrors.invalid('revision', cr.revision, 'must be greater than or equal to 0'));
      if (old) causes.push(...validateImmutable(cr.data, (old as ControllerRevision).data, 'data'));
      return causes;
    },
  },
});

export const APPS_KINDS: ResourceDefinition[] = [controllerRevisions, daemonSets, deployments, replicaSets, statefulSets];
