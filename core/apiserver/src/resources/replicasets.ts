import { defaultReplicaSet, replicaSetSchema, validateReplicaSet, type KubeObject, type ReplicaSet } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { age, AGE_COLUMN, column, CONTAINERS_COLUMN, containerCells, IMAGES_COLUMN, NAME_COLUMN, selectorCell } from './columns.js';
import { selectorField } from './field-selectors.js';
import { ALL_VERBS, decoderFor, splitSpecAndStatus } from './lifecycle.js';

function replicaSetCells(object: KubeObject, now: number): unknown[] {
  const replicaSet = object as ReplicaSet;
  return [
    object.metadata.name,
    replicaSet.spec?.replicas ?? 0,
    replicaSet.status?.replicas ?? 0,
    replicaSet.status?.readyReplicas ?? 0,
    age(object, now),
    ...containerCells(replicaSet.spec?.template?.spec?.containers),
    selectorCell(replicaSet.spec?.selector),
  ];
}

export const replicaSets: ResourceDefinition = {
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  listKind: 'ReplicaSetList',
  resource: 'replicasets',
  singular: 'replicaset',
  namespaced: true,
  shortNames: ['rs'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  verbs: ALL_VERBS,
  hasStatus: true,
  decode: decoderFor(replicaSetSchema),
  defaults: (object) => defaultReplicaSet(object as ReplicaSet),
  validate: (object, old) => validateReplicaSet(object as ReplicaSet, old as ReplicaSet | undefined),
  prepareForCreate(object) {
    object.status = { replicas: 0 };
  },
  prepareForUpdate: splitSpecAndStatus(['labels']),
  fieldSelectors: {
    'status.replicas': selectorField<ReplicaSet>((rs) => rs.status?.replicas ?? 0),
  },
  table: {
    columns: [
      NAME_COLUMN,
      column('Desired', 'Replicas is the number of desired replicas.', 0, 'integer'),
      column('Current', 'Replicas is the most recently observed number of replicas.', 0, 'integer'),
      column('Ready', 'readyReplicas is the number of pods targeted by this ReplicaSet with a Ready Condition.', 0, 'integer'),
      AGE_COLUMN,
      CONTAINERS_COLUMN,
      IMAGES_COLUMN,
      column('Selector', 'Selector is a label query over pods that should match the replica count.', 1),
    ],
    cells: replicaSetCells,
  },
};
