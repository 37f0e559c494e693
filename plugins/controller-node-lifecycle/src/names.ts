export const PLUGIN_NAME = '@skiff/plugin-controller-node-lifecycle';
/** The name `enabled` in the controller manager's options refers to (kube-controller-manager 1.28's `nodelifecycle`). */
export const CONTROLLER_NAME = 'nodelifecycle';

/** Where kubelets keep their heartbeat Leases, one per node, named like the node. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** The pod index by node name this controller reads (the informer keeps the first definition of a name). */
export const POD_NODE_NAME_INDEX = 'spec.nodeName';

/** Taint keys, as Kubernetes names them. */
export const TAINT_KEY = Object.freeze({
  NOT_READY: 'node.kubernetes.io/not-ready',
  UNREACHABLE: 'node.kubernetes.io/unreachable',
  UNSCHEDULABLE: 'node.kubernetes.io/unschedulable',
  MEMORY_PRESSURE: 'node.kubernetes.io/memory-pressure',
  DISK_PRESSURE: 'node.kubernetes.io/disk-pressure',
  PID_PRESSURE: 'node.kubernetes.io/pid-pressure',
  NETWORK_UNAVAILABLE: 'node.kubernetes.io/network-unavailable',
});

/** Node condition types this controller reads or writes. */
export const CONDITION = Object.freeze({
  READY: 'Ready',
  MEMORY_PRESSURE: 'MemoryPressure',
  DISK_PRESSURE: 'DiskPressure',
  PID_PRESSURE: 'PIDPressure',
  NETWORK_UNAVAILABLE: 'NetworkUnavailable',
});

/** Conditions set to Unknown when a node's kubelet falls silent. */
export const CONDITIONS_SET_UNKNOWN = Object.freeze([CONDITION.READY, CONDITION.MEMORY_PRESSURE, CONDITION.DISK_PRESSURE, CONDITION.PID_PRESSURE]);

/** Reasons and messages of the conditions written for a silent kubelet. */
export const SILENT_KUBELET = Object.freeze({
  STOPPED_REASON: 'NodeStatusUnknown',
  STOPPED_MESSAGE: 'Kubelet stopped posting node status.',
  NEVER_REASON: 'NodeStatusNeverUpdated',
  NEVER_MESSAGE: 'Kubelet never posted node status.',
});

/** A node with this label counts towards no zone's health. */
export const LABEL_EXCLUDE_DISRUPTION = 'node.kubernetes.io/exclude-disruption';

/** Zone labels of a node: a zone is the pair of them. */
export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  REGISTERED_NODE: 'RegisteredNode',
  REMOVING_NODE: 'RemovingNode',
  NODE_NOT_READY: 'NodeNotReady',
  TAINT_MANAGER_EVICTION: 'TaintManagerEviction',
});

/** The pod condition written before a taint eviction (PodDisruptionConditions). */
export const DISRUPTION_TARGET = Object.freeze({
  TYPE: 'DisruptionTarget',
  REASON: 'DeletionByTaintManager',
  MESSAGE: 'Taint manager: deleting due to NoExecute taint',
});

/** Defaults of kube-controller-manager's flags. */
export const DEFAULTS = Object.freeze({
  NODE_MONITOR_PERIOD_SECONDS: 5,
  NODE_MONITOR_GRACE_PERIOD_SECONDS: 40,
  NODE_STARTUP_GRACE_PERIOD_SECONDS: 60,
  NODE_EVICTION_RATE: 0.1,
  SECONDARY_NODE_EVICTION_RATE: 0.01,
  LARGE_CLUSTER_SIZE_THRESHOLD: 50,
  UNHEALTHY_ZONE_THRESHOLD: 0.55,
});

/** How often the rate-limited NoExecute tainting runs (upstream's NodeEvictionPeriod). */
export const NO_EXECUTE_TAINTING_PERIOD_MS = 100;
/** Attempts at a write that loses to another writer before giving up until the next pass. */
export const WRITE_ATTEMPTS = 5;
