import { errorMessage, RESOURCES, isApiError, isPodTerminal, type KubeObject, type Node, type Pod } from '@skiff/api';
import { EventRecorderImpl, objectKey, SharedInformerFactory } from '@skiff/client';
import { currentTrace, runInTrace, withSpan } from '@skiff/kernel';
import type {
  ApiClient,
  ClusterEvent,
  ClusterEventAction,
  ClusterEventResource,
  CycleState,
  EventRecorder,
  Informer,
  InformerFactory,
  LiveSpan,
  Logger,
  NodeInfo,
  Registry,
  PostFilterResult,
  SchedulerHandle,
  SchedulerPlugin,
  SchedulingStatus,
} from '@skiff/kernel';
import { SchedulerCache } from './cache/scheduler-cache.js';
import { schedulePod, SKIPPED_FILTERS_KEY, type ScheduleFailure } from './framework/cycle.js';
import { recordTallies, talliesOf, tracedProfile, type PluginTallies } from './framework/traced-profile.js';
import { cloneNodeInfo, addPodToNodeInfo } from './framework/node-info.js';
import { cloneCycleState, podPriority } from './framework/plugin-helpers.js';
import { Nominator } from './nominator.js';
import { SchedulerMetrics, type AttemptResult } from './metrics.js';
import { callPlugin, failureMessage, PluginThrew, type ExtensionPoint } from './framework/extension-points.js';
import type { SchedulingProfile } from './framework/profile.js';
import { DEFAULT_SCHEDULER_NAME, SCHEDULER_COMPONENT } from './names.js';
import { markNotScheduled, type NotScheduledReason } from './pod-condition.js';
import { SchedulingQueue, type QueueEvent, type QueuedPod, type SchedulingQueueOptions } from './queue/scheduling-queue.js';

export interface SchedulerOptions {
  /** One profile per schedulerName; the first one's queueSort orders the one queue. */
  profiles?: SchedulingProfile[];
  /** A single profile (named by `schedulerName`); used when `profiles` is not given. */
  profile?: SchedulingProfile;
  client: ApiClient;
  /** Informers for nodes and pods are taken from here; the scheduler starts the factory. */
  informers: InformerFactory;
  recorder: EventRecorder;
  /**
   * A recorder per profile, named after its schedulerName as upstream's are (events then read "From
   * <schedulerName>"); without it, `recorder` records for every profile.
   */
  recorderFor?: (schedulerName: string) => EventRecorder;
  logger: Logger;
  /** With a single `profile`: pods whose spec.schedulerName is this (an empty one means the default) are ours. */
  schedulerName?: string;
  /** Tie breaker among equally scored nodes; `Math.random` unless a test needs it fixed. */
  random?: () => number;
  queue?: Omit<SchedulingQueueOptions, 'compare'>;
  /** Where the scheduler_* metrics go (the kernel's `metrics`, or the worker thread's own registry). */
  metrics?: Registry;
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
  /** The plugins that rejected the pod (only their registered events retry it). */
  unschedulablePlugins?: ReadonlySet<string>;
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

/** Which kinds of change each node update is, as cluster events name them. */
function nodeUpdateActions(old: Node, node: Node): ClusterEventAction[] {
  const actions: ClusterEventAction[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(old.metadata.labels, node.metadata.labels)) actions.push('UpdateNodeLabel');
  if (!same(old.spec?.taints, node.spec?.taints) || old.spec?.unschedulable !== node.spec?.unschedulable) actions.push('UpdateNodeTaint');
  if (!same(old.status?.allocatable, node.status?.allocatable)) actions.push('UpdateNodeAllocatable');
  const conditions = (n: Node) => n.status?.conditions?.map((condition) => [condition.type, condition.status]);
  if (!same(conditions(old), conditions(node))) actions.push('UpdateNodeCondition');
  if (!same(old.status?.images, node.status?.images)) actions.push('Update');
  return actions;
}

/** Whether a registered event covers this change (an `Update` registration covers every kind of update). */
function covers(registered: ClusterEvent, event: QueueEvent): boolean {
  if (registered.resource !== '*' && registered.resource !== event.resource) return false;
  return event.actions.some(
    (action) =>
      registered.actions.includes('*') || registered.actions.includes(action) || (action.startsWith('Update') && registered.actions.includes('Update')),
  );
}

/** Kinds besides nodes and pods whose changes some plugin asked to hear about, and how to watch them. */
const WATCHED_KINDS: [ClusterEventResource, keyof typeof RESOURCES][] = [
  ['PersistentVolumeClaim', 'persistentvolumeclaims'],
  ['PersistentVolume', 'persistentvolumes'],
  ['StorageClass', 'storageclasses'],
  ['CSINode', 'csinodes'],
  ['Namespace', 'namespaces'],
  ['PodDisruptionBudget', 'poddisruptionbudgets'],
];

/**
 * The scheduler: watches nodes and pods, keeps the cache and the queue current, and runs one scheduling
 * cycle at a time (the pure `schedulePod`, then reserve), with permit and binding running in the
 * background so the next pod does not wait for the API server. Each pod goes through the profile its
 * `spec.schedulerName` names.
 */
export class Scheduler {
  readonly cache = new SchedulerCache();
  readonly queue: SchedulingQueue;
  readonly nominator = new Nominator();
  private readonly profiles = new Map<string, SchedulingProfile>();
  private readonly first: SchedulingProfile;
  private readonly random: () => number;
  private readonly logger: Logger;
  private pods: Informer<Pod> | undefined;
  private loop: Promise<void> | undefined;
  private readonly bindings = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly recorders = new Map<string, EventRecorder>();
  /** Each plugin's registered events (undefined: every event), by plugin name. */
  private readonly pluginEvents = new Map<string, readonly ClusterEvent[] | undefined>();
  private readonly metrics: SchedulerMetrics | undefined;
  private stopPending: (() => void) | undefined;

  constructor(private readonly options: SchedulerOptions) {
    const profiles =
      options.profiles ??
      (options.profile ? [{ ...{}, ...options.profile, schedulerName: options.schedulerName ?? options.profile.schedulerName ?? DEFAULT_SCHEDULER_NAME }] : []);
    if (profiles.length === 0) throw new Error('a scheduler needs at least one profile');
    for (const profile of profiles) this.profiles.set(profile.schedulerName || DEFAULT_SCHEDULER_NAME, profile);
    this.first = profiles[0]!;
    this.random = options.random ?? Math.random;
    this.logger = options.logger;
    this.metrics = options.metrics ? new SchedulerMetrics(options.metrics) : undefined;
    for (const profile of profiles) for (const plugin of profile.plugins) this.pluginEvents.set(plugin.name, plugin.events);
    this.queue = new SchedulingQueue({
      ...{},
      ...options.queue,
      compare: this.queueSort(),
      interested: (plugin, event) => {
        const events = this.pluginEvents.get(plugin);
        return !events || events.some((registered) => covers(registered, event));
      },
      gate: (pod) => this.gateOf(pod),
    });
    for (const profile of profiles) profile.nominatedFilter = (state, pod, info) => this.filterWithNominated(profile, state, pod, info);
  }

  private recorderOf(profile: SchedulingProfile): EventRecorder {
    const { recorder, recorderFor } = this.options;
    if (!recorderFor) return recorder;
    let named = this.recorders.get(profile.schedulerName);
    if (!named) this.recorders.set(profile.schedulerName, (named = recorderFor(profile.schedulerName)));
    return named;
  }

  private profileFor(pod: Pod): SchedulingProfile | undefined {
    return this.profiles.get(pod.spec.schedulerName || DEFAULT_SCHEDULER_NAME);
  }

  /** The first preEnqueue plugin of the pod's profile that holds it back (SchedulingGates). */
  private gateOf(pod: Pod): string | undefined {
    const profile = this.profileFor(pod);
    for (const plugin of profile?.preEnqueue ?? []) {
      try {
        const status = plugin.preEnqueue!(pod);
        if (status) return plugin.name;
      } catch (err) {
        this.logger.error(
          { err, ...this.pluginFields(profile!, plugin.name), extensionPoint: 'PreEnqueue' },
          failureMessage('PreEnqueue', plugin.name, errorMessage(err)),
        );
        return plugin.name;
      }
    }
    return undefined;
  }

  /**
   * The profile's queueSort, guarded: a comparator that throws would break the queue's heap, so a throw
   * counts as "equal" (the queue then keeps arrival order) and is logged once.
   */
  private queueSort(): ((a: Pod, b: Pod) => number) | undefined {
    const sorter = this.first.queueSort;
    if (!sorter) return undefined;
    let logged = false;
    return (a, b) => {
      try {
        return sorter.queueSort!(a, b);
      } catch (err) {
        if (!logged) {
          logged = true;
          this.logger.error(
            { err, ...this.pluginFields(this.first, sorter.name), extensionPoint: 'QueueSort' },
            failureMessage('QueueSort', sorter.name, errorMessage(err)),
          );
        }
        return 0;
      }
    };
  }

  /** Log fields naming a scheduler plugin and the package that registered it. */
  private pluginFields(profile: SchedulingProfile, name: string): { schedulerPlugin: string; plugin?: string } {
    const owner = profile.packages.get(name);
    return { schedulerPlugin: name, ...(owner ? { plugin: owner } : {}) };
  }

  /**
   * Filters a node counting the pods nominated there with at least this pod's priority, as upstream does:
   * once with them (they will run there), then without (they may not). Undefined when none are nominated.
   */
  private filterWithNominated(profile: SchedulingProfile, state: CycleState, pod: Pod, info: NodeInfo): SchedulingStatus | undefined {
    if (this.nominator.empty) return undefined;
    const name = info.node.metadata.name!;
    const own = objectKey(pod);
    const priority = podPriority(pod);
    const nominated = this.nominator.pods(name).filter((other) => objectKey(other) !== own && podPriority(other) >= priority);
    if (nominated.length === 0) return undefined;
    const withState = cloneCycleState(state);
    const withInfo = cloneNodeInfo(info);
    for (const other of nominated) {
      addPodToNodeInfo(withInfo, other);
      const status = this.runAddPod(profile, withState, pod, other, withInfo);
      if (status) return status;
    }
    const first = this.runPlainFilters(profile, withState, pod, withInfo);
    if (first) return first;
    return this.runPlainFilters(profile, state, pod, info);
  }

  private runPlainFilters(profile: SchedulingProfile, state: CycleState, pod: Pod, info: NodeInfo): SchedulingStatus {
    const skipped = state.get(SKIPPED_FILTERS_KEY) as Set<string> | undefined;
    for (const plugin of profile.filter) {
      if (skipped?.has(plugin.name)) continue;
      const status = plugin.filter!(state, pod, info);
      if (status) return status.plugin ? status : { ...{}, ...status, plugin: plugin.name };
    }
    return null;
  }

  private runAddPod(profile: SchedulingProfile, state: CycleState, pod: Pod, other: Pod, info: NodeInfo): SchedulingStatus {
    const skipped = state.get(SKIPPED_FILTERS_KEY) as Set<string> | undefined;
    for (const plugin of profile.preFilter) {
      if (skipped?.has(plugin.name)) continue;
      const status = plugin.addPod?.(state, pod, other, info);
      if (status) return status;
    }
    return null;
  }

  private handle(profile: SchedulingProfile): SchedulerHandle {
    const { client, informers } = this.options;
    return {
      client,
      informers,
      recorder: this.recorderOf(profile),
      logger: this.logger,
      profileName: profile.schedulerName,
      signal: this.stopping.signal,
      snapshot: () => this.cache.snapshot(),
      nominatedPods: (nodeName) => this.nominator.pods(nodeName),
      addPod: (state, pod, other, info) => this.runAddPod(profile, state, pod, other, info),
      removePod: (state, pod, other, info) => {
        const skipped = state.get(SKIPPED_FILTERS_KEY) as Set<string> | undefined;
        for (const plugin of profile.preFilter) {
          if (skipped?.has(plugin.name)) continue;
          const status = plugin.removePod?.(state, pod, other, info);
          if (status) return status;
        }
        return null;
      },
      runFilters: (state, pod, info) => {
        const nominated = this.filterWithNominated(profile, state, pod, info);
        return nominated !== undefined ? nominated : this.runPlainFilters(profile, state, pod, info);
      },
    };
  }

  /** Calls every plugin's init with its profile's handle, starts the informers, waits until they have synced, then starts scheduling. */
  async start(signal: AbortSignal): Promise<void> {
    const { informers } = this.options;
    for (const profile of this.profiles.values()) {
      const handle = this.handle(profile);
      for (const plugin of profile.plugins) {
        if (plugin.init) await callPlugin('Init', plugin.name, () => plugin.init!(handle));
      }
    }
    const nodes = informers.informer<Node>(RESOURCES.nodes);
    const pods = informers.informer<Pod>(RESOURCES.pods);
    this.pods = pods;
    nodes.addHandlers({
      add: (node) => {
        this.cache.setNode(node);
        this.queue.moveAllToActive({ resource: 'Node', actions: ['Add'] });
      },
      update: (old, node) => {
        this.cache.setNode(node);
        const actions = nodeUpdateActions(old, node);
        if (actions.length > 0) this.queue.moveAllToActive({ resource: 'Node', actions });
      },
      delete: (node) => {
        this.cache.removeNode(node.metadata.name!);
        this.queue.moveAllToActive({ resource: 'Node', actions: ['Delete'] });
      },
    });
    pods.addHandlers({
      add: (pod) => this.podChanged(pod),
      update: (old, pod) => this.podChanged(pod, old),
      delete: (pod) => this.podDeleted(pod),
    });
    const wanted = new Set<ClusterEventResource>();
    for (const events of this.pluginEvents.values()) for (const event of events ?? []) wanted.add(event.resource);
    for (const [resource, kind] of WATCHED_KINDS) {
      if (!wanted.has(resource)) continue;
      const informer = informers.informer<KubeObject>(RESOURCES[kind]);
      informer.addHandlers({
        add: () => this.queue.moveAllToActive({ resource, actions: ['Add'] }),
        update: () => this.queue.moveAllToActive({ resource, actions: ['Update'] }),
        delete: () => this.queue.moveAllToActive({ resource, actions: ['Delete'] }),
      });
    }
    informers.start(signal);
    await informers.waitForSync(signal);
    this.stopPending = this.metrics?.pending(() => this.queue.counts());
    this.loop = this.run();
  }

  /** Stops taking pods and waits for the cycle and the bindings in flight. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.stopPending?.();
    this.queue.close();
    await this.loop;
    await Promise.allSettled([...this.bindings]);
  }

  private responsibleFor(pod: Pod): boolean {
    return this.profileFor(pod) !== undefined && !pod.metadata.deletionTimestamp;
  }

  private podChanged(pod: Pod, old?: Pod): void {
    const key = objectKey(pod);
    if (pod.spec.nodeName) {
      this.queue.delete(key);
      this.nominator.delete(key);
      if (!isPodTerminal(pod)) {
        this.cache.setPod(key, pod);
        if (!old || !old.spec.nodeName) this.queue.moveAllToActive({ resource: 'Pod', actions: ['Add'] });
        else if (JSON.stringify(old.metadata.labels) !== JSON.stringify(pod.metadata.labels))
          this.queue.moveAllToActive({ resource: 'Pod', actions: ['UpdatePodLabel'] });
      } else if (old && !isPodTerminal(old)) {
        this.cache.removePod(key);
        this.queue.moveAllToActive({ resource: 'Pod', actions: ['Delete'] });
      }
      return;
    }
    if (this.responsibleFor(pod)) {
      this.nominator.set(key, pod, pod.status?.nominatedNodeName);
      this.queue.add(key, pod, !old || specOrMetaChanged(old, pod));
    } else {
      this.queue.delete(key);
      this.nominator.delete(key);
    }
  }

  private podDeleted(pod: Pod): void {
    const key = objectKey(pod);
    this.queue.delete(key);
    this.nominator.delete(key);
    if (pod.spec.nodeName || this.cache.isAssumed(key)) {
      this.cache.removePod(key);
      this.queue.moveAllToActive({ resource: 'Pod', actions: ['Delete'] });
    }
  }

  private async run(): Promise<void> {
    for (let next = await this.queue.pop(); next; next = await this.queue.pop()) {
      try {
        await this.scheduleOne(next.info, next.cycle);
      } catch (err) {
        this.logger.error({ err, pod: next.info.key }, 'scheduling cycle failed');
        this.attemptEnded(next.info, 'error', this.profileFor(next.info.pod));
        this.queue.requeueAfterError(next.info.key);
      }
    }
  }

  /** Counts the pod's attempt that ended now (scheduler_schedule_attempts_total and its duration). */
  private attemptEnded(info: QueuedPod, result: AttemptResult, profile: SchedulingProfile | undefined): void {
    if (!this.metrics || info.attemptStartedAt === undefined) return;
    this.metrics.attempt(result, profile?.schedulerName || DEFAULT_SCHEDULER_NAME, (performance.now() - info.attemptStartedAt) / 1000);
    delete info.attemptStartedAt;
  }

  private scheduleOne(info: QueuedPod, cycle: number): Promise<void> {
    if (this.metrics) info.attemptStartedAt = performance.now();
    const traced = info.trace;
    if (traced === undefined || traced.trace.closed) return this.attempt(info, cycle);
    delete info.trace;
    const { key, pod } = info;
    const attrs = { pod: key, ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}) };
    return runInTrace(traced, () =>
      withSpan({ name: `schedule ${key}`, kind: 'scheduler', component: 'scheduler', attrs }, (span) => this.attempt(info, cycle, span)),
    );
  }

  /** One scheduling attempt; with `span` (a traced pod), through a profile that times each plugin. */
  private async attempt(info: QueuedPod, cycle: number, span?: LiveSpan): Promise<void> {
    const { pod, key } = info;
    const plain = this.profileFor(pod);
    if (!plain) {
      this.queue.delete(key);
      return;
    }
    const tallies: PluginTallies | undefined = span ? new Map() : undefined;
    const profile = tallies ? tracedProfile(plain, tallies) : plain;
    const state: CycleState = new Map();
    const result = schedulePod(profile, state, pod, this.cache.snapshot(), this.random);
    if (span) {
      span.attrs.result = result.nodeName === undefined ? `unschedulable: ${result.message}` : `node ${result.nodeName}`;
      if (result.nodeName !== undefined) span.attrs.node = result.nodeName;
      recordTallies(currentTrace()!, tallies!, plain.packages);
    }
    if (result.nodeName === undefined) {
      await this.failed(profile, info, cycle, await this.filterFailure(profile, state, pod, result));
      return;
    }
    const nodeName = result.nodeName;
    this.cache.assume(key, pod, nodeName);
    for (const plugin of profile.reserve) {
      if (!plugin.reserve) continue;
      const failure = await failureOf('Reserve', plugin, () => plugin.reserve!(state, pod, nodeName));
      if (failure) {
        await this.undo(profile, state, pod, key, nodeName);
        await this.failed(profile, info, cycle, failure);
        return;
      }
    }
    this.logger.debug({ pod: key, node: nodeName, score: result.score, feasible: result.feasibleNodes }, 'pod assumed');
    const binding = this.bindingCycle(profile, info, cycle, state, nodeName).finally(() => this.bindings.delete(binding));
    this.bindings.add(binding);
  }

  /** No node: an error as it is; a misfit after PostFilter plugins (preemption, say) acted on it and added to the message. */
  private async filterFailure(profile: SchedulingProfile, state: CycleState, pod: Pod, result: ScheduleFailure): Promise<SchedulingFailure> {
    if (result.code === 'Error') {
      const { message, plugin, extensionPoint, cause } = result;
      return { message, reason: 'SchedulerError', plugin, extensionPoint, cause };
    }
    const notes: string[] = [];
    let nominatedNodeName: string | undefined;
    for (const plugin of profile.postFilter) {
      let status: SchedulingStatus | PostFilterResult;
      try {
        status = await callPlugin('PostFilter', plugin.name, () => plugin.postFilter!(state, pod, result.failures));
      } catch (err) {
        if (err instanceof PluginThrew) return thrownFailure(err);
        throw err;
      }
      if (status && 'code' in status && status.code === 'Error') {
        const reasons = status.reasons.join(', ') || 'no reason given';
        return { message: failureMessage('PostFilter', plugin.name, reasons), reason: 'SchedulerError', plugin: plugin.name, extensionPoint: 'PostFilter' };
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
      unschedulablePlugins: result.unschedulablePlugins,
      ...(nominatedNodeName ? { nominatedNodeName } : {}),
    };
  }

  private async bindingCycle(profile: SchedulingProfile, info: QueuedPod, cycle: number, state: CycleState, nodeName: string): Promise<void> {
    const { pod, key } = info;
    const failure = await this.bind(profile, state, pod, nodeName).catch((err: unknown): SchedulingFailure => {
      if (isApiError(err, 'NotFound')) return { message: 'the pod no longer exists', reason: 'Unschedulable' };
      if (err instanceof PluginThrew) return thrownFailure(err);
      return { message: `Binding rejected: ${errorMessage(err)}`, reason: 'SchedulerError', cause: err };
    });
    if (failure) {
      await this.undo(profile, state, pod, key, nodeName);
      await this.failed(profile, info, cycle, failure);
      return;
    }
    this.queue.done(key);
    this.nominator.delete(key);
    this.attemptEnded(info, 'scheduled', profile);
    this.metrics?.scheduled(info.attempts, (performance.now() - info.queuedAt) / 1000);
    this.logger.debug({ pod: key, node: nodeName }, 'pod bound');
    const tallies = talliesOf(profile);
    const traced = tallies && currentTrace();
    if (traced) recordTallies(traced, tallies, profile.packages);
    this.recorderOf(profile).event(pod, 'Normal', 'Scheduled', `Successfully assigned ${key} to ${nodeName}`);
    for (const plugin of profile.postBind) {
      await callPlugin('PostBind', plugin.name, () => plugin.postBind!(state, pod, nodeName)).catch((err: PluginThrew) =>
        this.logger.warn({ err: err.cause, pod: key, ...this.pluginFields(profile, plugin.name), extensionPoint: 'PostBind' }, err.message),
      );
    }
  }

  /** Permit, preBind and bind; returns why it failed, or undefined once the pod is bound. */
  private async bind(profile: SchedulingProfile, state: CycleState, pod: Pod, nodeName: string): Promise<SchedulingFailure | undefined> {
    const { client } = this.options;
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
        if (err instanceof PluginThrew && isApiError(err.cause, 'NotFound')) throw err.cause;
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

  private async undo(profile: SchedulingProfile, state: CycleState, pod: Pod, key: string, nodeName: string): Promise<void> {
    for (const plugin of [...profile.reserve].reverse()) {
      if (!plugin.unreserve) continue;
      await callPlugin('Unreserve', plugin.name, () => plugin.unreserve!(state, pod, nodeName)).catch((err: PluginThrew) =>
        this.logger.warn({ err: err.cause, pod: key, ...this.pluginFields(profile, plugin.name), extensionPoint: 'Unreserve' }, err.message),
      );
    }
    this.cache.forget(key);
  }

  /**
   * Records why the pod got no node, on the pod (PodScheduled=False with reason Unschedulable or
   * SchedulerError, and status.nominatedNodeName when preemption made room) and as a FailedScheduling
   * event, and queues it for another try: a misfit waits for a cluster change its rejecting plugins
   * registered, an error only backs off. An error is logged naming the plugin, as kube-scheduler's
   * "Error scheduling pod; retrying".
   */
  private async failed(profile: SchedulingProfile, info: QueuedPod, cycle: number, failure: SchedulingFailure): Promise<void> {
    const { message, reason, plugin, extensionPoint, cause, nominatedNodeName } = failure;
    this.attemptEnded(info, reason === 'SchedulerError' ? 'error' : 'unschedulable', profile);
    if (reason === 'SchedulerError') {
      this.logger.error(
        { err: cause, pod: info.key, message, ...(plugin ? this.pluginFields(profile, plugin) : {}), extensionPoint },
        'Error scheduling pod; retrying',
      );
    } else {
      this.logger.debug({ pod: info.key, message }, 'pod unschedulable');
    }
    const latest = this.pods?.get(info.key);
    if (!latest || latest.spec.nodeName || !this.responsibleFor(latest)) {
      this.queue.delete(info.key);
      return;
    }
    if (nominatedNodeName) this.nominator.set(info.key, latest, nominatedNodeName);
    if (reason === 'SchedulerError') this.queue.requeueAfterError(info.key);
    else this.queue.requeueUnschedulable(info.key, cycle, failure.unschedulablePlugins);
    this.recorderOf(profile).event(latest, 'Warning', 'FailedScheduling', message);
    await markNotScheduled(this.options.client, latest, message, reason, nominatedNodeName).catch((err: unknown) =>
      this.logger.warn({ err, pod: info.key }, 'could not set the PodScheduled condition'),
    );
  }
}

/** A Scheduler over `client` with informers of its own and a recorder per profile (as the plugin and its worker thread make it). */
export function createScheduler(
  client: ApiClient,
  profiles: SchedulingProfile[],
  logger: Logger,
  metrics?: Registry,
): { scheduler: Scheduler; informers: SharedInformerFactory } {
  const informers = new SharedInformerFactory(client, { logger });
  const scheduler = new Scheduler({
    profiles,
    client,
    informers,
    recorder: new EventRecorderImpl(client, { component: SCHEDULER_COMPONENT, logger }),
    recorderFor: (component) => new EventRecorderImpl(client, { component, logger }),
    logger,
    metrics,
  });
  return { scheduler, informers };
}
