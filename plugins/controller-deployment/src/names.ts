export const PLUGIN_NAME = '@skiff/plugin-controller-deployment';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'deployment';

/** Added to a ReplicaSet's selector, labels and pod template so the ReplicaSets of one Deployment never overlap. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

export const ANNOTATION = Object.freeze({
  /** The rollout revision, on the Deployment and on each of its ReplicaSets. */
  REVISION: 'deployment.kubernetes.io/revision',
  /** Earlier revisions a ReplicaSet had, when a rollback made it current again. */
  REVISION_HISTORY: 'deployment.kubernetes.io/revision-history',
  /** `spec.replicas` of the Deployment when it last scaled this ReplicaSet. */
  DESIRED_REPLICAS: 'deployment.kubernetes.io/desired-replicas',
  /** `spec.replicas` + max surge at that time: the base for proportional scaling. */
  MAX_REPLICAS: 'deployment.kubernetes.io/max-replicas',
  LAST_APPLIED: 'kubectl.kubernetes.io/last-applied-configuration',
  ROLLBACK_TO: 'deprecated.deployment.rollback.to',
});

export const CONDITION = Object.freeze({
  AVAILABLE: 'Available',
  PROGRESSING: 'Progressing',
  REPLICA_FAILURE: 'ReplicaFailure',
});

export const REASON = Object.freeze({
  MIN_REPLICAS_AVAILABLE: 'MinimumReplicasAvailable',
  MIN_REPLICAS_UNAVAILABLE: 'MinimumReplicasUnavailable',
  NEW_RS_CREATED: 'NewReplicaSetCreated',
  FOUND_NEW_RS: 'FoundNewReplicaSet',
  RS_UPDATED: 'ReplicaSetUpdated',
  NEW_RS_AVAILABLE: 'NewReplicaSetAvailable',
  TIMED_OUT: 'ProgressDeadlineExceeded',
  PAUSED: 'DeploymentPaused',
  RESUMED: 'DeploymentResumed',
  RS_CREATE_ERROR: 'ReplicaSetCreateError',
});

export const EVENT_REASON = Object.freeze({
  SCALING: 'ScalingReplicaSet',
  SELECTING_ALL: 'SelectingAll',
  RS_CREATE_ERROR: REASON.RS_CREATE_ERROR,
});
