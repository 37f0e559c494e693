import type { Node, Pod } from '@skiff/api';

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
}

/** Per-scheduling-cycle scratch space shared by one pod's plugins (preFilter writes, filter reads). */
export type CycleState = Map<string, unknown>;

export type SchedulingCode = 'Unschedulable' | 'UnschedulableAndUnresolvable' | 'Error';

/** `null` means success; otherwise why the pod cannot go here. */
export type SchedulingStatus = { code: SchedulingCode; reasons: string[]; plugin?: string } | null;

export interface SchedulerPlugin {
  name: string;
  /** Weight used when a profile enables the plugin's score without naming one. */
  defaultWeight?: number;
  queueSort?(a: Pod, b: Pod): number;
  preFilter?(state: CycleState, pod: Pod): SchedulingStatus;
  filter?(state: CycleState, pod: Pod, node: NodeInfo): SchedulingStatus;
  postFilter?(state: CycleState, pod: Pod, failures: Map<string, SchedulingStatus>): SchedulingStatus | Promise<SchedulingStatus>;
  preScore?(state: CycleState, pod: Pod, nodes: NodeInfo[]): SchedulingStatus;
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
