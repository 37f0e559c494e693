import { errorMessage, RESOURCES, isApiError, isPodTerminal, type Node, type Pod } from '@skiff/api';
import { objectKey } from '@skiff/client';
import type { ApiClient, CycleState, EventRecorder, Informer, InformerFactory, Logger, PostFilterResult, SchedulerPlugin, SchedulingStatus } from '@skiff/kernel';
import { SchedulerCache } from './cache/scheduler-cache.js';
import { schedulePod, type ScheduleFailure } from './framework/cycle.js';
import { callPlugin, failureMessage, PluginThrew, type ExtensionPoint } from './framework/extension-points.js';
import type { SchedulingProfile } from './framework/profile.js';
import { DEFAULT_SCHEDULER_NAME } from './names.js';
import { markNotScheduled, type NotScheduledReason } from './pod-condition.js';
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

/** Why a pod got no node this time: a misfit, or an error naming the plugin that failed and where. */
interface SchedulingFailure {
  message: string;
  reason: NotScheduledReason;
  plugin?: string;
  extensionPoint?: ExtensionPoint;
  cause?: unknown;
  /** Preemption made room there: recorded as the pod's status.nominatedNodeName. */
  nominatedNodeName?: string;
}

function thrownFailure(err: PluginThrew): SchedulingFailure {
  return { message: err.message, reason: 'SchedulerError', plugin: err.plugin, extensionPoint: err.extensionPoint, cause: err.cause };
}

/** A status a reserve, permit, preBind or bind plugin answered: an Error status is an error, anything else a misfit. */
function statusFailure(point: ExtensionPoint, plugin: string, status: NonNullable<SchedulingStatus>): SchedulingFailure {
  const reason = status.code === 'Error' ? 'SchedulerError' : 'Unschedulable';
  return { message: failureMessage(point, plugin, status.reasons.join(', ')), reason, plugin, extensionPoint: point };
}

/** Runs a plugin method that answers a status; a status or a throw is the failure to record. */
async function failureOf(
  point: ExtensionPoint,
  plugin: SchedulerPlugin,
  call: () => SchedulingStatus | Promise<SchedulingStatus>,
): Promise<SchedulingFailure | undefined> {
  try {
    const status = await callPlugin(point, plugin.name, call);
    return status ? statusFailure(point, plugin.name, status) : undefined;
  } catch (err) {
    if (err instanceof PluginThrew) return thrownFailure(err);
    throw err;
  }
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
    this.schedulerName = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.random = options.random ?? Math.random;
    this.logger = options.logger;
    this.queue = new SchedulingQueue({ ...options.queue, compare: this.queueSort() });
  }

  /**
   * The profile's queueSort, guarded: a comparator that throws would break the queue's heap, so a throw
   * counts as "equal" (the queue then keeps arrival order) and is logged once.
   */
  private queueSort(): ((a: Pod, b: Pod) => number) | undefined {
    const sorter = this.options.profile.queueSort;
    if (!sorter) return undefined;
    let logged = false;
    return (a, b) => {
      try {
        return sorter.queueSort!(a, b);
      } catch (err) {
        if (!logged) {
          logged = true;
          this.logger.error(
            { err, ...this.pluginFields(sorter.name), extensionPoint: 'QueueSort' },
            failureMessage('QueueSort', sorter.name, errorMessage(err)),
          );
        }
        return 0;
      }
    };
  }

  /** Log fields naming a scheduler plugin and the package that registered it. */
  private pluginFields(name: string): { schedulerPlugin: string; plugin?: string } {
    const owner = this.options.profile.packages.get(name);
    return { schedulerPlugin: name, ...(owner ? { plugin: owner } : {}) };
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
      if (!isPodTerminal(pod)) {
        this.cache.setPod(key, pod);
      } else if (old && !isPodTerminal(old)) {
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
        this.queue.requeueAfterError(next.info.key);
      }
    }
  }

  private async scheduleOne(info: QueuedPod, cycle: number): Promise<void> {
    const { pod, key } = info;
    const { profile } = this.options;
    const state: CycleState = new Map();
    const result = schedulePod(profile, state, pod, this.cache.nodeInfos(), this.random);
    if (result.nodeName === undefined) {
      await this.failed(info, cycle, await this.filterFailure(state, pod, result));
      return;
    }
    const nodeName = result.nodeName;
    this.cache.assume(key, pod, nodeName);
    for (const plugin of profile.reserve) {
      if (!plugin.reserve) continue;
      const failure = await failureOf('Reserve', plugin, () => plugin.reserve!(state, pod, nodeName));
      if (failure) {
        await this.undo(state, pod, key, nodeName);
        await this.failed(info, cycle, failure);
        return;
      }
    }
    this.logger.debug({ pod: key, node: nodeName, score: result.score, feasible: result.feasibleNodes }, 'pod assumed');
    const binding = this.bindingCycle(info, cycle, state, nodeName).finally(() => this.bindings.delete(binding));
    this.bindings.add(binding);
  }

  /** No node: an error as it is; a misfit after PostFilter plugins (preemption, say) acted on it and added to the message. */
  private async filterFailure(state: CycleState, pod: Pod, result: ScheduleFailure): Promise<SchedulingFailure> {
    if (result.code === 'Error') {
      const { message, plugin, extensionPoint, cause } = result;
      return { message, reason: 'SchedulerError', plugin, extensionPoint, cause };
    }
    const notes: string[] = [];
    let nominatedNodeName: string | undefined;
    for (const plugin of this.options.profile.postFilter) {
      let status: SchedulingStatus | PostFilterResult;
      try {
        status = await callPlugin('PostFilter', plugin.name, () => plugin.postFilter!(state, pod, result.failures));
      } catch (err) {
        if (err instanceof PluginThrew) return thrownFailure(err);
        throw err;
      }
      if (status?.reasons?.length) notes.push(...status.reasons);
      if (status && 'nominatedNodeName' in status) {
        nominatedNodeName = status.nominatedNodeName;
        break;
      }
    }
    return {
      message: notes.length ? `${result.message} ${notes.join(' ')}` : result.message,
      reason: 'Unschedulable',
      ...(nominatedNodeName ? { nominatedNodeName } : {}),
    };
  }

  private async bindingCycle(info: QueuedPod, cycle: number, state: CycleState, nodeName: string): Promise<void> {
    const { pod, key } = info;
    const failure = await this.bind(state, pod, nodeName).catch((err: unknown): SchedulingFailure => {
      if (isApiError(err, 'NotFound')) return { message: 'the pod no longer exists', reason: 'Unschedulable' };
      return { message: `Binding rejected: ${errorMessage(err)}`, reason: 'SchedulerError', cause: err };
    });
    if (failure) {
      await this.undo(state, pod, key, nodeName);
      await this.failed(info, cycle, failure);
      return;
    }
    this.queue.done(key);
    this.logger.info({ pod: key, node: nodeName }, 'pod bound');
    this.options.recorder.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${key} to ${nodeName}`);
    for (const plugin of this.options.profile.postBind) {
      await callPlugin('PostBind', plugin.name, () => plugin.postBind!(state, pod, nodeName)).catch((err: PluginThrew) =>
        this.logger.warn({ err: err.cause, pod: key, ...this.pluginFields(plugin.name), extensionPoint: 'PostBind' }, err.message),
      );
    }
  }

  /** Permit, preBind and bind; returns why it failed, or undefined once the pod is bound. */
  private async bind(state: CycleState, pod: Pod, nodeName: string): Promise<SchedulingFailure | undefined> {
    const { profile, client } = this.options;
    for (const plugin of profile.permit) {
      const failure = await failureOf('Permit', plugin, () => plugin.permit!(state, pod, nodeName));
      if (failure) return failure;
    }
    for (const plugin of profile.preBind) {
      const failure = await failureOf('PreBind', plugin, () => plugin.preBind!(state, pod, nodeName));
      if (failure) return failure;
    }
    for (const plugin of profile.bind) {
      let status: SchedulingStatus | undefined;
      try {
        status = await callPlugin('Bind', plugin.name, () => plugin.bind!(state, pod, nodeName));
      } catch (err) {
        if (err instanceof PluginThrew) return thrownFailure(err);
        throw err;
      }
      if (status === undefined) continue;
      return status ? statusFailure('Bind', plugin.name, status) : undefined;
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
      if (!plugin.unreserve) continue;
      await callPlugin('Unreserve', plugin.name, () => plugin.unreserve!(state, pod, nodeName)).catch((err: PluginThrew) =>
        this.logger.warn({ err: err.cause, pod: key, ...this.pluginFields(plugin.name), extensionPoint: 'Unreserve' }, err.message),
      );
    }
    this.cache.forget(key);
  }

  /**
   * Records why the pod got no node, on the pod (PodScheduled=False with reason Unschedulable or
   * SchedulerError) and as a FailedScheduling event, and queues it for another try: a misfit waits for a
   * cluster change, an error only backs off. An error is logged naming the plugin, as kube-scheduler's
   * "Error scheduling pod; retrying".
   */
  private async failed(info: QueuedPod, cycle: number, failure: SchedulingFailure): Promise<void> {
    const { message, reason, plugin, extensionPoint, cause } = failure;
    if (reason === 'SchedulerError') {
      this.logger.error({ err: cause, pod: info.key, message, ...(plugin ? this.pluginFields(plugin) : {}), extensionPoint }, 'Error scheduling pod; retrying');
    } else {
      this.logger.debug({ pod: info.key, message }, 'pod unschedulable');
    }
    const latest = this.pods?.get(info.key);
    if (!latest || latest.spec.nodeName || !this.responsibleFor(latest)) {
      this.queue.delete(info.key);
      return;
    }
    if (reason === 'SchedulerError') this.queue.requeueAfterError(info.key);
    else this.queue.requeueUnschedulable(info.key, cycle);
    this.options.recorder.event(latest, 'Warning', 'FailedScheduling', message);
    await markNotScheduled(this.options.client, latest, message, reason).catch((err: unknown) =>
      this.logger.warn({ err, pod: info.key }, 'could not set the PodScheduled condition'),
    );
  }
}
