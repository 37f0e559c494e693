import { RESOURCES, type Node, type Pod, type PodDisruptionBudget } from '@skiff/api';
import { EventRecorderImpl, SharedInformerFactory } from '@skiff/client';
import {
  recordingLogger,
  type ApiClient,
  type CycleState,
  type Kernel,
  type SchedulerHandle,
  type SchedulerPlugin,
  type SchedulingStatus,
} from '@skiff/kernel';
import {
  buildProfile,
  collectSchedulerPlugins,
  createNodeInfo,
  NodeListSnapshot,
  schedulePod,
  type ScheduleFailure,
  type SchedulingProfile,
} from '@skiff/scheduler';

/**
 * What the scheduler's handle gives a plugin, built from a profile and the API as it is now: the snapshot
 * and nominated pods are read from the API server when `refresh` runs; addPod/removePod/runFilters call
 * the profile's own plugins (nominated pods are not counted: the tests nominate none of higher priority).
 */
export class TestHandle implements SchedulerHandle {
  readonly logger = recordingLogger();
  readonly recorder: EventRecorderImpl;
  readonly informers: SharedInformerFactory;
  readonly signal: AbortSignal = new AbortController().signal;
  private current = new NodeListSnapshot([]);
  private nominated = new Map<string, Pod[]>();

  constructor(
    readonly client: ApiClient,
    private readonly profile: SchedulingProfile,
    /** Only nodes with this label selector are the cluster's (tests share one API server). */
    private readonly nodeSelector: string,
    readonly profileName = profile.schedulerName,
  ) {
    this.recorder = new EventRecorderImpl(client, { component: profileName });
    this.informers = new SharedInformerFactory(client, { resyncMs: 0 });
  }

  /** Reads nodes and pods from the API into NodeInfos (terminal and unbound pods left out). */
  async refresh(): Promise<void> {
    const nodes = (await this.client.list<Node>(RESOURCES.nodes, undefined, { labelSelector: this.nodeSelector })).items;
    const pods = (await this.client.list<Pod>(RESOURCES.pods)).items;
    this.current = new NodeListSnapshot(
      nodes.map((node) =>
        createNodeInfo(
          node,
          pods.filter((pod) => pod.spec.nodeName === node.metadata.name),
        ),
      ),
    );
    this.nominated = new Map();
    for (const pod of pods) {
      const name = pod.status?.nominatedNodeName;
      if (!pod.spec.nodeName && name) this.nominated.set(name, [...(this.nominated.get(name) ?? []), pod]);
    }
  }

  snapshot(): NodeListSnapshot {
    return this.current;
  }

  nominatedPods(nodeName: string): Pod[] {
    return this.nominated.get(nodeName) ?? [];
  }

  addPod(state: CycleState, pod: Pod, other: Pod, node: Parameters<SchedulerHandle['addPod']>[3]): SchedulingStatus {
    for (const plugin of this.profile.preFilter) {
      const status = plugin.addPod?.(state, pod, other, node);
      if (status) return status;
    }
    return null;
  }

  removePod(state: CycleState, pod: Pod, other: Pod, node: Parameters<SchedulerHandle['removePod']>[3]): SchedulingStatus {
    for (const plugin of this.profile.preFilter) {
      const status = plugin.removePod?.(state, pod, other, node);
      if (status) return status;
    }
    return null;
  }

  runFilters(state: CycleState, pod: Pod, node: Parameters<SchedulerHandle['runFilters']>[2]): SchedulingStatus {
    for (const plugin of this.profile.filter) {
      const status = plugin.filter!(state, pod, node);
      if (status) return status;
    }
    return null;
  }
}

/**
 * The default profile of the scheduler plugins the kernel's packages registered (DefaultPreemption's
 * `args` as a profile's pluginConfig), with the handle its postFilter was initialised with (informers synced).
 */
export async function preemptionProfile(
  kernel: Kernel,
  client: ApiClient,
  signal: AbortSignal,
  nodeSelector: string,
  args: Record<string, unknown> = {},
): Promise<{ profile: SchedulingProfile; handle: TestHandle; plugin: SchedulerPlugin }> {
  const profile = buildProfile(collectSchedulerPlugins(kernel), { pluginConfig: [{ name: 'DefaultPreemption', args }] });
  const handle = new TestHandle(client, profile, nodeSelector);
  const plugin = profile.postFilter[0]!;
  await plugin.init!(handle);
  handle.informers.start(signal);
  await handle.informers.waitForSync(signal);
  return { profile, handle, plugin };
}

/** One real scheduling cycle for `pod` on the API's current state; it must fit nowhere. */
export async function failedCycle(handle: TestHandle, profile: SchedulingProfile, pod: Pod): Promise<{ state: CycleState; result: ScheduleFailure }> {
  await handle.refresh();
  const state: CycleState = new Map();
  const result = schedulePod(profile, state, pod, handle.snapshot(), () => 0);
  if (result.nodeName !== undefined) throw new Error(`expected no node to fit, got ${result.nodeName}`);
  return { state, result };
}

export function node(name: string, cpu: string, labels: Record<string, string> = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    spec: {},
    status: {
      allocatable: { cpu, memory: '8Gi', pods: '110' },
      capacity: { cpu, memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

export function pod(
  ns: string,
  name: string,
  cpu: string,
  priority: number,
  extra: { nodeName?: string; labels?: Record<string, string>; preemptionPolicy?: 'Never' | 'PreemptLowerPriority'; startTime?: string } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: extra.labels ?? { app: name } },
    spec: {
      containers: [{ name: 'main', image: 'nginx', resources: { requests: { cpu } } }],
      priority,
      ...(extra.nodeName ? { nodeName: extra.nodeName } : {}),
      ...(extra.preemptionPolicy ? { preemptionPolicy: extra.preemptionPolicy } : {}),
    },
  };
}

export function pdb(ns: string, name: string, matchLabels: Record<string, string>, disruptionsAllowed: number): PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: ns },
    spec: { selector: { matchLabels }, maxUnavailable: disruptionsAllowed },
    status: { disruptionsAllowed, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, observedGeneration: 0 },
  };
}
