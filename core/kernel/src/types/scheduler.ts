import type { Node, Pod } from '@skiff/api';
import type { ApiClient, EventRecorder, InformerFactory } from './client.js';
import type { Logger } from './logger.js';

/** Resource amounts in scheduler units: millicores, bytes, pod count, plus any extended resources. */
export interface ResourceAmounts {
  milliCPU: number;
  memory: number;
  pods: number;
  scalar?: Record<string, number>;
}

/** A node as the scheduler sees it: the Node object plus the pods bound (or assumed) to it. */
export interface NodeInfo {
  node: Node;
  pods: Pod[];
  requested: ResourceAmounts;
  allocatable: ResourceAmounts;
  /**
   * Like `requested`, but counting containers that set no cpu / memory request as 100m / 200Mi, the way
   * Kubernetes scores. Kept by the scheduler's cache so score plugins need not walk every pod.
   */
  nonZeroRequested?: ResourceAmounts;
  /** The node's pods that have any pod affinity or anti-affinity term (kept by the scheduler's cache). */
  podsWithAffinity?: Pod[];
  /** The node's pods that have a required pod anti-affinity term (kept by the scheduler's cache). */
  podsWithRequiredAntiAffinity?: Pod[];
  /**
   * Bumped by the cache on every change to the node or its pods, so a plugin may keep data derived from a
   * NodeInfo (keyed by the NodeInfo object) and recompute it only when this moves.
   */
  generation?: number;
}

/** Per-scheduling-cycle scratch space shared by one pod's plugins (preFilter writes, filter reads). */
export type CycleState = Map<string, unknown>;

/**
 * A value a plugin keeps in the CycleState that `addPod` / `removePod` change in place must implement
 * this: preemption clones the state (`cloneCycleState`) once per node it simulates on.
 */
export interface ClonableStateData {
  clone(): unknown;
}

/**
 * `Skip` (from preFilter or preScore only) says the plugin has nothing to decide for this pod: its filter,
 * or its score and normalizeScore, are not called this cycle (upstream's Skip status).
 */
export type SchedulingCode = 'Unschedulable' | 'UnschedulableAndUnresolvable' | 'Error' | 'Skip';

/** `null` means success; otherwise why the pod cannot go here. */
export type SchedulingStatus = { code: SchedulingCode; reasons: string[]; plugin?: string } | null;

/**
 * What a preFilter may answer instead of a status: the pod can only go to these nodes (NodeAffinity's
 * `metadata.name` fields, NodeName). The scheduler filters only those; several results intersect.
 */
export interface PreFilterResult {
  nodeNames: ReadonlySet<string>;
}

/**
 * What a postFilter may answer instead of a status: preemption made room on this node (victims are
 * being deleted). The scheduler records it as the pod's `status.nominatedNodeName`.
 */
export interface PostFilterResult {
  nominatedNodeName: string;
  /** Appended to the FailedScheduling message, as upstream's "preemption: …". */
  reasons?: string[];
}

/** The nodes of one scheduling cycle, as they were when the cycle began (assumed pods included). */
export interface SchedulerSnapshot {
  readonly nodes: readonly NodeInfo[];
  get(name: string): NodeInfo | undefined;
  /** Nodes holding at least one pod with a pod affinity or anti-affinity term. */
  readonly nodesWithAffinityPods: readonly NodeInfo[];
  /** Nodes holding at least one pod with a required pod anti-affinity term. */
  readonly nodesWithRequiredAntiAffinityPods: readonly NodeInfo[];
  /** On how many nodes an image (as a node's `status.images[].names` lists it) is present. */
  imageNodeCount(image: string): number;
}

/** Kinds of cluster change a plugin may ask its rejected pods to be retried on. `Pod` means an assigned pod. */
export type ClusterEventResource =
  | 'Node'
  | 'Pod'
  | 'PersistentVolume'
  | 'PersistentVolumeClaim'
  | 'StorageClass'
  | 'CSINode'
  | 'Namespace'
  | 'PodDisruptionBudget'
  | '*';

export type ClusterEventAction =
  | 'Add'
  | 'Update'
  | 'Delete'
  | 'UpdateNodeLabel'
  | 'UpdateNodeTaint'
  | 'UpdateNodeAllocatable'
  | 'UpdateNodeCondition'
  | 'UpdatePodLabel'
  | 'UpdatePodScaleDown'
  | 'UpdatePodTolerations'
  | 'UpdatePodSchedulingGatesEliminated'
  | '*';

/** A cluster change that may make a pod this plugin rejected schedulable (upstream's EventsToRegister). */
export interface ClusterEvent {
  resource: ClusterEventResource;
  actions: readonly ClusterEventAction[];
}

/**
 * What the scheduler gives a plugin at start (`init`): the API, informers (shared with the scheduler),
 * the current snapshot, and — for preemption — the profile's own filters and the nominated pods.
 */
export interface SchedulerHandle {
  readonly client: ApiClient;
  readonly informers: InformerFactory;
  readonly logger: Logger;
  readonly recorder: EventRecorder;
  /** The profile's schedulerName. */
  readonly profileName: string;
  /** Aborted when the scheduler stops: a plugin waiting (preBind on volumes, say) gives up. */
  readonly signal: AbortSignal;
  /** The snapshot the current cycle works on. */
  snapshot(): SchedulerSnapshot;
  /** Pods nominated to `nodeName` by preemption and not yet bound. */
  nominatedPods(nodeName: string): Pod[];
  /** The profile's preFilter plugins' `addPod` / `removePod`, on `state` (preemption simulates with them). */
  addPod(state: CycleState, podToSchedule: Pod, podToAdd: Pod, node: NodeInfo): SchedulingStatus;
  removePod(state: CycleState, podToSchedule: Pod, podToRemove: Pod, node: NodeInfo): SchedulingStatus;
  /** The profile's filters on one node, nominated pods of equal or higher priority counted. */
  runFilters(state: CycleState, pod: Pod, node: NodeInfo): SchedulingStatus;
}

export interface SchedulerPlugin {
  name: string;
  /** Weight used when a profile enables the plugin's score without naming one. */
  defaultWeight?: number;
  /**
   * A copy configured with a profile's `pluginConfig` args (KubeSchedulerConfiguration). Plugins without
   * it take no args; a profile that passes some fails the start.
   */
  withArgs?(args: Record<string, unknown>): SchedulerPlugin;
  /** Called once at scheduler start, per profile using the plugin. */
  init?(handle: SchedulerHandle): void | Promise<void>;
  /** Cluster changes that may let a pod this plugin rejected fit. Without it, any change retries it. */
  events?: readonly ClusterEvent[];
  queueSort?(a: Pod, b: Pod): number;
  /**
   * A pod waiting in the queue that must not be tried yet (SchedulingGates): answer a status and the pod
   * is parked as `SchedulingGated` until it changes.
   */
  preEnqueue?(pod: Pod): SchedulingStatus;
  preFilter?(state: CycleState, pod: Pod, snapshot: SchedulerSnapshot): SchedulingStatus | PreFilterResult;
  /** PreFilter extensions: a pod is added to / removed from `node` (preemption's simulation). */
  addPod?(state: CycleState, podToSchedule: Pod, podToAdd: Pod, node: NodeInfo): SchedulingStatus;
  removePod?(state: CycleState, podToSchedule: Pod, podToRemove: Pod, node: NodeInfo): SchedulingStatus;
  filter?(state: CycleState, pod: Pod, node: NodeInfo): SchedulingStatus;
  postFilter?(
    state: CycleState,
    pod: Pod,
    failures: Map<string, SchedulingStatus>,
  ): SchedulingStatus | PostFilterResult | Promise<SchedulingStatus | PostFilterResult>;
  preScore?(state: CycleState, pod: Pod, nodes: NodeInfo[], snapshot: SchedulerSnapshot): SchedulingStatus;
  /** 0..100, higher is better. */
  score?(state: CycleState, pod: Pod, node: NodeInfo): number;
  normalizeScore?(state: CycleState, pod: Pod, scores: Map<string, number>): void;
  reserve?(state: CycleState, pod: Pod, nodeName: string): SchedulingStatus | Promise<SchedulingStatus>;
  unreserve?(state: CycleState, pod: Pod, nodeName: string): void | Promise<void>;
  permit?(state: CycleState, pod: Pod, nodeName: string): SchedulingStatus | Promise<SchedulingStatus>;
  preBind?(state: CycleState, pod: Pod, nodeName: string): SchedulingStatus | Promise<SchedulingStatus>;
  /** Return null when bound, undefined to let the next bind plugin (or the default binder) do it. */
  bind?(state: CycleState, pod: Pod, nodeName: string): SchedulingStatus | undefined | Promise<SchedulingStatus | undefined>;
  postBind?(state: CycleState, pod: Pod, nodeName: string): void | Promise<void>;
}

export interface SchedulerPluginRegistry {
  register(plugin: SchedulerPlugin): void;
  get(name: string): SchedulerPlugin | undefined;
  list(): SchedulerPlugin[];
}
