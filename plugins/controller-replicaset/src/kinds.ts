import { RESOURCES, type KubeObject, type ReplicaSet, type ReplicaSetStatus, type ReplicationController, type ResourceType } from '@skiff/api';
import { CONTROLLER_NAME, REPLICATION_CONTROLLER_NAME } from './names.js';

/** A kind whose objects keep a number of pods from a template, and how the controller sees it. */
export interface ReplicatedKind<T extends KubeObject> {
  /** The name `enabled` in the controller manager's options refers to; also the work queue's name. */
  controllerName: string;
  resource: ResourceType;
  /** The object as the ReplicaSet the controller works on; its metadata is the object's own. */
  asReplicaSet(object: T): ReplicaSet;
}

/** An object of a replicated kind with the status the controller writes. */
export type ReplicatedObject = KubeObject & { status?: ReplicaSetStatus };

export const REPLICA_SETS: ReplicatedKind<ReplicaSet> = {
  controllerName: CONTROLLER_NAME,
  resource: RESOURCES.replicasets,
  asReplicaSet: (rs) => rs,
};

/**
 * ReplicationControllers are ReplicaSets with an equality-only selector, as kube-controller-manager
 * treats them: the selector becomes `matchLabels`, everything else carries over unchanged.
 */
export const REPLICATION_CONTROLLERS: ReplicatedKind<ReplicationController> = {
  controllerName: REPLICATION_CONTROLLER_NAME,
  resource: RESOURCES.replicationcontrollers,
  asReplicaSet(rc) {
    const spec = rc.spec ?? {};
    const view: ReplicaSet = {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: rc.metadata,
      spec: {
        selector: { matchLabels: spec.selector ?? {} },
        // The API server requires a template; without one the view has the empty template Go would have.
        template: spec.template ?? { spec: { containers: [] } },
        ...(spec.replicas !== undefined ? { replicas: spec.replicas } : {}),
        ...(spec.minReadySeconds !== undefined ? { minReadySeconds: spec.minReadySeconds } : {}),
      },
    };
    if (rc.status) view.status = rc.status;
    return view;
  },
};
