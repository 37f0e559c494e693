import { RESOURCES, isApiError, type Node, type Pod } from '@skiff/api';
import { objectKey } from '@skiff/client';
import type { ApiClient, CycleState, EventRecorder, Informer, InformerFactory, Logger, SchedulingStatus } from '@skiff/kernel';
import { SchedulerCache } from './cache/scheduler-cache.js';
import { schedulePod, type ScheduleFailure } from './framework/cycle.js';
import type { SchedulingProfile } from './framework/profile.js';
import { DEFAULT_SCHEDULER_NAME } from './names.js';
import { markUnschedulable } from './pod-condition.js';
import { SchedulingQueue, type QueuedPod, type SchedulingQueueOptions } from './queue/scheduling-queue.js';

export interface SchedulerOptions {
  profile: SchedulingProfile;
  client: ApiClient;
  /** Informers for nodes and pods are taken from here; the scheduler starts the factory. */
  informers: InformerFactory;
  recorder: EventRecorder;
  logger: Logger;
  /** Pods whose spec.schedulerName is this (an empty one means the default) are ours. */
  schedulerName?: string;
  /** Tie breaker among equally scored nodes; `Math.random` unless a test needs it fixed. */
  random?: () => number;
  queue?: Omit<SchedulingQueueOptions, 'compare'>;
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** A change to anything but status and bookkeeping: worth another scheduling attempt. */
function specOrMetaChanged(old: Pod, pod: Pod): boolean {
  const strip = ({ metadata, spec }: Pod) => {
    const { resourceVersion: _rv, managedFields: _mf, generation: _g, ...meta } = metadata;
    return JSON.stringify([meta, spec]);
  };
  return strip(old) !== strip(pod);
}

/** Node changes that can make a pod fit where it did not (heartbeats alone cannot). */
function schedulingRelevant(old: Node, node: Node): boolean {
  const view = (n: Node) =>
    JSON.stringify([
      n.metadata.labels,
      n.spec?.unschedulable,
      n.spec?.taints,
      n.status?.allocatable,
      n.status?.conditions?.map((condition) => [condition.type, condition.status]),
    ]);
  return view(old) !== view(node);
}

/**
 * The scheduler: watches nodes and pods, keeps the cache and the queue current, and runs one scheduling
 * cycle at a time (the pure `schedulePod`, then reserve), with permit and binding running in the
 * background so the next pod does not wait for the API server.
 */
export class Scheduler {
  readonly cache = new SchedulerCache();
  readonly queue: SchedulingQueue;
  private readonly schedulerName: string;
  private readonly random: () => number;
  private readonly logger: Logger;
  private pods: Informer<Pod> | undefined;
  private loop: Promise<void> | undefined;
  private readonly bindings = new Set<Promise<void>>();

  constructor(private readonly options: SchedulerOptions) {
    const sorter = options.profile.queueSort;
    this.queue = new SchedulingQueue({ ...options.queue, compare: sorter ? (a, b) => sorter.queueSort!(a, b) : undefined });
    this.schedulerName = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.random = options.random ?? Math.random;
    this.logger = options.logger;
  }

  /** Starts the informers, waits until they have synced, then starts scheduling. */
  async start(signal: AbortSignal): Promise<void> {
    const { informers } = this.options;
    const nodes = informers.informer<Node>(RESOURCES.nodes);
    const pods = informers.informer<Pod>(RESOURCES.pods);
    this.pods = pods;
    nodes.addHandlers({
      add: (node) => {
        this.cache.setNode(node);
        this.queue.moveAllToActive();
      },
      update: (old, node) => {
        this.cache.setNode(node);
        if (schedulingRelevant(old, node)) this.queue.moveAllToActive();
      },
      delete: (node) => this.cache.removeNode(node.metadata.name!),
    });
    pods.addHandlers({
      add: (pod) => this.podChanged(pod),
      update: (old, pod) => this.podChanged(pod, old),
      delete: (pod) => this.podDeleted(pod),
    });
    informers.start(signal);
    await informers.waitForSync(signal);
    this.loop = this.run();
  }

  /** Stops taking pods and waits for the cycle and the bindings in flight. */
  async stop(): Promise<void> {
    this.queue.close();
    await this.loop;
    await Promise.allSettled([...this.bindings]);
  }

  private responsibleFor(pod: Pod): boolean {
    return (pod.spec.schedulerName || DEFAULT_SCHEDULER_NAME) === this.schedulerName && !pod.metadata.deletionTimestamp;
  }

  private podChanged(pod: Pod, old?: Pod): void {
    const key = objectKey(pod);
    if (pod.spec.nodeName) {
      this.queue.delete(key);
      if (!isTerminal(pod)) {
        this.cache.setPod(key, pod);
      } else if (old && !isTerminal(old)) {
        this.cache.removePod(key);
        this.queue.moveAllToActive();
      }
      return;
    }
    if (this.responsibleFor(pod)) this.queue.add(key, pod, !old || specOrMetaChanged(old, pod));
    else this.queue.delete(key);
  }

  private podDeleted(pod: Pod): void {
    const key = objectKey(pod);
    this.queue.delete(key);
    if (pod.spec.nodeName || this.cache.isAssumed(key)) {
      this.cache.removePod(key);
      this.queue.moveAllToActive();
    }
  }

  private async run(): Promise<void> {
    for (let next = await this.queue.pop(); next; next = await this.queue.pop()) {
      try {
        await this.scheduleOne(next.info, next.cycle);
      } catch (err) {
        this.logger.error({ err, pod: next.info.key }, 'scheduling cycle failed');
        this.queue.requeueUnschedulable(next.info.key, next.cycle);
      }
    }
  }

  private async scheduleOne(info: QueuedPod, cycle: number): Promise<void> {
    const { pod, key } = info;
    const { profile } = this.options;
    const state: CycleState = new Map();
    const result = schedulePod(profile, state, pod, this.cache.nodeInfos(), this.random);
    if (result.nodeName === undefined) {
      await this.failed(info, cycle, await this.postFilterMessage(state, pod, result));
      return;
    }
    const nodeName = result.nodeName;
    this.cache.assume(key, pod, nodeName);
    for (const plugin of profile.reserve) {
      const status = plugin.reserve ? await plugin.reserve(state, pod, nodeName) : null;
      if (status) {
        await this.undo(state, pod, key, nodeName);
        await this.failed(info, cycle, `running Reserve plugin "${plugin.name}": ${status.reasons.join(', ')}`);
        return;
      }
    }
    this.logger.debug({ pod: key, node: nodeName, score: result.score, feasible: result.feasibleNodes }, 'pod assumed');
    const binding = this.bindingCycle(info, cycle, state, nodeName).finally(() => this.bindings.delete(binding));
    this.bindings.add(binding);
  }

  /** PostFilter plugins (preemption, say) get to act on the failure and add to the message. */
  private async postFilterMessage(state: CycleState, pod: Pod, result: ScheduleFailure): Promise<string> {
    if (result.code === 'Error') return result.message;
    const notes: string[] = [];
    for (const plugin of this.options.profile.postFilter) {
      const status: SchedulingStatus = await plugin.postFilter!(state, pod, result.failures);
      if (status?.reasons.length) notes.push(...status.reasons);
    }
    return notes.length ? `${result.message} ${notes.join(' ')}` : result.message;
  }

  private async bindingCycle(info: QueuedPod, cycle: number, state: CycleState, nodeName: string): Promise<void> {
    const { pod, key } = info;
    const rejection = await this.bind(state, pod, nodeName).catch((err: unknown) => {
      if (isApiError(err, 'NotFound')) return 'the pod no longer exists';
      return `Binding rejected: ${(err as Error).message}`;
    });
    if (rejection) {
      await this.undo(state, pod, key, nodeName);
      await this.failed(info, cycle, rejection);
      return;
    }
    this.queue.done(key);
    this.logger.info({ pod: key, node: nodeName }, 'pod bound');
    this.options.recorder.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${key} to ${nodeName}`);
    for (const plugin of this.options.profile.postBind) {
      await Promise.resolve(plugin.postBind!(state, pod, nodeName)).catch((err: unknown) =>
        this.logger.warn({ err, pod: key, plugin: plugin.name }, 'postBind plugin failed'),
      );
    }
  }

  /** Permit, preBind and bind; returns why it failed, or undefined once the pod is bound. */
  private async bind(state: CycleState, pod: Pod, nodeName: string): Promise<string | undefined> {
    const { profile, client } = this.options;
    for (const plugin of profile.permit) {
      const status = await plugin.permit!(state, pod, nodeName);
      if (status) return `running Permit plugin "${plugin.name}": ${status.reasons.join(', ')}`;
    }
    for (const plugin of profile.preBind) {
      const status = await plugin.preBind!(state, pod, nodeName);
      if (status) return `running PreBind plugin "${plugin.name}": ${status.reasons.join(', ')}`;
    }
    for (const plugin of profile.bind) {
      const status = await plugin.bind!(state, pod, nodeName);
      if (status === undefined) continue;
      return status ? `running Bind plugin "${plugin.name}": ${status.reasons.join(', ')}` : undefined;
    }
    const { name, namespace, uid } = pod.metadata;
    await client.createSubresource(RESOURCES.pods, name!, namespace!, 'binding', {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace, ...(uid ? { uid } : {}) },
      target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    });
    return undefined;
  }

  private async undo(state: CycleState, pod: Pod, key: string, nodeName: string): Promise<void> {
    for (const plugin of [...this.options.profile.reserve].reverse()) {
      await Promise.resolve(plugin.unreserve?.(state, pod, nodeName)).catch((err: unknown) =>
        this.logger.warn({ err, pod: key, plugin: plugin.name }, 'unreserve failed'),
      );
    }
    this.cache.forget(key);
  }

  /** Records why the pod did not fit, on the pod and as an event, and queues it for another try. */
  private async failed(info: QueuedPod, cycle: number, message: string): Promise<void> {
    const latest = this.pods?.get(info.key);
    if (!latest || latest.spec.nodeName || !this.responsibleFor(latest)) {
      this.queue.delete(info.key);
      return;
    }
    this.queue.requeueUnschedulable(info.key, cycle);
    this.logger.debug({ pod: info.key, message }, 'pod unschedulable');
    this.options.recorder.event(latest, 'Warning', 'FailedScheduling', message);
    await markUnschedulable(this.options.client, latest, message).catch((err: unknown) =>
      this.logger.warn({ err, pod: info.key }, 'could not set the PodScheduled condition'),
    );
  }
}
