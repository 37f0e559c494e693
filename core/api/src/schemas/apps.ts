import { objectsIn, t } from './language.js';
import { labelSelectorSchema, objectMetaSchema, typeMetaFields } from './meta.js';
import { podTemplateSpecSchema } from './pod.js';

const object = objectsIn('io.k8s.api.apps.v1');

const rollingUpdateDeploymentSchema = object(
  'RollingUpdateDeployment',
  {
    maxUnavailable: t.intOrString(
      'The maximum number of pods that can be unavailable during the update. Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%). Defaults to 25%.',
    ),
    maxSurge: t.intOrString(
      'The maximum number of pods that can be scheduled above the desired number of pods. Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%). Defaults to 25%.',
    ),
  },
  'Spec to control the desired behavior of rolling update.',
);

const deploymentStrategySchema = object(
  'DeploymentStrategy',
  {
    type: t.string({ description: 'Type of deployment. Can be "Recreate" or "RollingUpdate". Default is RollingUpdate.', goType: 'v1.DeploymentStrategyType' }),
    rollingUpdate: rollingUpdateDeploymentSchema,
  },
  'DeploymentStrategy describes how to replace existing pods with new ones.',
);

export const deploymentSpecSchema = object(
  'DeploymentSpec',
  {
    replicas: t.int32('Number of desired pods. This is a pointer to distinguish between explicit zero and not specified. Defaults to 1.'),
    selector: labelSelectorSchema,
    template: podTemplateSpecSchema,
    strategy: deploymentStrategySchema,
    minReadySeconds: t.int32(
      'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available. Defaults to 0.',
    ),
    revisionHistoryLimit: t.int32('The number of old ReplicaSets to retain to allow rollback. Defaults to 10.'),
    paused: t.boolean('Indicates that the deployment is paused.'),
    progressDeadlineSeconds: t.int32('The maximum time in seconds for a deployment to make progress before it is considered to be failed. Defaults to 600s.'),
  },
  'DeploymentSpec is the specification of the desired behavior of the Deployment.',
);

const deploymentConditionSchema = object(
  'DeploymentCondition',
  {
    type: t.string('Type of deployment condition.'),
    status: t.string('Status of the condition, one of True, False, Unknown.'),
    lastUpdateTime: t.time('The last time this condition was updated.'),
    lastTransitionTime: t.time('Last time the condition transitioned from one status to another.'),
    reason: t.string("The reason for the condition's last transition."),
    message: t.string('A human readable message indicating details about the transition.'),
  },
  'DeploymentCondition describes the state of a deployment at a certain point.',
);

export const deploymentStatusSchema = object(
  'DeploymentStatus',
  {
    observedGeneration: t.int64('The generation observed by the deployment controller.'),
    replicas: t.int32('Total number of non-terminating pods targeted by this deployment (their labels match the selector).'),
    updatedReplicas: t.int32('Total number of non-terminating pods targeted by this deployment that have the desired template spec.'),
    readyReplicas: t.int32('Total number of non-terminating pods targeted by this Deployment with a Ready Condition.'),
    availableReplicas: t.int32('Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.'),
    unavailableReplicas: t.int32('Total number of unavailable pods targeted by this deployment.'),
    terminatingReplicas: t.int32('Total number of terminating pods targeted by this deployment.'),
    conditions: t.array(deploymentConditionSchema, "Represents the latest available observations of a deployment's current state."),
    collisionCount: t.int32(
      'Count of hash collisions for the Deployment. The Deployment controller uses this field as a collision avoidance mechanism when it needs to create the name for the newest ReplicaSet.',
    ),
  },
  'DeploymentStatus is the most recently observed status of the Deployment.',
);

export const deploymentSchema = object(
  'Deployment',
  { ...typeMetaFields, metadata: objectMetaSchema, spec: deploymentSpecSchema, status: deploymentStatusSchema },
  'Deployment enables declarative updates for Pods and ReplicaSets.',
  { group: 'apps', version: 'v1', kind: 'Deployment' },
);

export const replicaSetSpecSchema = object(
  'ReplicaSetSpec',
  {
    replicas: t.int32('Replicas is the number of desired pods. Defaults to 1.'),
    minReadySeconds: t.int32(
      'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available. Defaults to 0.',
    ),
    selector: labelSelectorSchema,
    template: podTemplateSpecSchema,
  },
  'ReplicaSetSpec is the specification of a ReplicaSet.',
);

const replicaSetConditionSchema = object(
  'ReplicaSetCondition',
  {
    type: t.string('Type of replica set condition.'),
    status: t.string('Status of the condition, one of True, False, Unknown.'),
    lastTransitionTime: t.time('The last time the condition transitioned from one status to another.'),
    reason: t.string("The reason for the condition's last transition."),
    message: t.string('A human readable message indicating details about the transition.'),
  },
  'ReplicaSetCondition describes the state of a replica set at a certain point.',
);

export const replicaSetStatusSchema = object(
  'ReplicaSetStatus',
  {
    replicas: t.int32('Replicas is the most recently observed number of non-terminating pods.'),
    fullyLabeledReplicas: t.int32('The number of non-terminating pods that have labels matching the labels of the pod template of the replicaset.'),
    readyReplicas: t.int32('The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.'),
    availableReplicas: t.int32('The number of available non-terminating pods (ready for at least minReadySeconds) for this replica set.'),
    terminatingReplicas: t.int32('The number of terminating pods for this replica set.'),
    observedGeneration: t.int64('ObservedGeneration reflects the generation of the most recently observed ReplicaSet.'),
    conditions: t.array(replicaSetConditionSchema, "Represents the latest available observations of a replica set's current state."),
  },
  'ReplicaSetStatus represents the current status of a ReplicaSet.',
);

export const replicaSetSchema = object(
  'ReplicaSet',
  { ...typeMetaFields, metadata: objectMetaSchema, spec: replicaSetSpecSchema, status: replicaSetStatusSchema },
  'ReplicaSet ensures that a specified number of pod replicas are running at any given time.',
  { group: 'apps', version: 'v1', kind: 'ReplicaSet' },
);
