import { defaultDeployment, deploymentSchema, validateDeployment, type Deployment, type KubeObject } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { age, AGE_COLUMN, column, CONTAINERS_COLUMN, containerCells, IMAGES_COLUMN, NAME_COLUMN, selectorCell } from './columns.js';
import { ALL_VERBS, decoderFor, splitSpecAndStatus } from './lifecycle.js';

function deploymentCells(object: KubeObject, now: number): unknown[] {
  const deployment = object as Deployment;
  const status = deployment.status ?? {};
  return [
    object.metadata.name,
    `${status.readyReplicas ?? 0}/${deployment.spec?.replicas ?? 0}`,
    status.updatedReplicas ?? 0,
    status.availableReplicas ?? 0,
    age(object, now),
    ...containerCells(deployment.spec?.template?.spec?.containers),
    selectorCell(deployment.spec?.selector),
  ];
}

export const deployments: ResourceDefinition = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  listKind: 'DeploymentList',
  resource: 'deployments',
  singular: 'deployment',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  verbs: ALL_VERBS,
  hasStatus: true,
  decode: decoderFor(deploymentSchema),
  defaults: (object) => defaultDeployment(object as Deployment),
  validate: (object, old) => validateDeployment(object as Deployment, old as Deployment | undefined),
  prepareForCreate(object) {
    object.status = {};
  },
  // The controller's status writes may not relabel the deployment.
  prepareForUpdate: splitSpecAndStatus(['labels']),
  table: {
    columns: [
      NAME_COLUMN,
      column('Ready', 'Number of the pod with ready state'),
      column('Up-to-date', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
      column('Available', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
      AGE_COLUMN,
      CONTAINERS_COLUMN,
      IMAGES_COLUMN,
      column('Selector', 'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.', 1),
    ],
    cells: deploymentCells,
  },
};
