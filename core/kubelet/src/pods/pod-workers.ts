import { RESOURCES, isApiError, isPodTerminal, type Container, type Node, type Pod, type PodStatus } from '@skiff/api';
import { WorkQueue, objectKey, runWorkers, splitObjectKey } from '@skiff/client';
import type { ApiClient, ContainerRuntime, EventRecorder, Hooks, Informer, Logger, PodAdmitResult, PodSyncContext } from '@skiff/kernel';
import { CONTAINER_RELIST_MS, CRI_LABELS, HOUSEKEEPING_MS } from '../names.js';
import type { KubeletMetrics } from '../metrics.js';
import type { ProbeManager } from '../probes/probe-manager.js';
import type { VolumeManager } from '../volumes/volume-manager.js';
import type { PodEventSink } from './events.js';
import type { ContainerObservation, PodObservation, PodRuntimeManager } from './pod-runtime.js';
import { generalPredicates } from './admission.js';
import { activeDeadline, DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_MESSAGE } from './active-deadline.js';
import { buildPodStatus, rejectedPodStatus, rfc3339, sameStatus, type PodOutcome, type StatusContext } from './pod-status.js';

export interface PodWorkersOptions {
  nodeName: string;
  client: ApiClient;
  /** Pods bound to this node (fieldSelector spec.nodeName=<node>). */
  pods: Informer<Pod>;
  manager: PodRuntimeManager;
  volumes: VolumeManager;
  /** Liveness, readiness and startup probes of the pods' containers. */
  probes: ProbeManager;
  runtime: ContainerRuntime;
  recorder: EventRecorder;
  hooks: Pick<Hooks, 'podAdmit' | 'podSync'>;
  /** The node as last registered (handed to podAdmit and podSync). */
  node: () => Node;
  hostIP: string;
  logger: Logger;
  /** Every pod is synced again this long after its last sync. */
  resyncMs: number;
  /** How often the runtime's containers are listed to notice exits (default CONTAINER_RELIST_MS). */
  relistMs?: number;
  workers?: number;
  /** Where the time from first seeing a pod to its running is observed (kubelet_pod_start_duration_seconds). */
  metrics?: KubeletMetrics;
}

/** A sync that could not finish yet (an image pull failed…): the worker retries it with backoff. */
class SyncIncomplete extends Error {
  constructor(key: string, reasons: string[]) {
    super(`pod ${key} is not fully started yet: ${reasons.join(', ')}`);
    this.name = 'SyncIncomplete';
  }
}

/**
 * One worker per pod at a time (the work queue never hands a key to two workers), fed by the pod
 * informer and a periodic resync: admit once, then converge the runtime to the pod and write the status
 * back when it changed; tear a deleted pod down and remove it from the API.
 */
export class PodWorkers {
  private readonly queue: WorkQueue<string>;
  /** Pods that passed node-level admission: key → uid. */
  private readonly admitted = new Map<string, string>();
  /** Pods node-level admission turned away, and why: key → uid and rejection (until they are gone). */
  private readonly rejected = new Map<string, { uid: string; rejection: NonNullable<PodAdmitResult> }>();
  /** The admission in progress: pods are admitted one at a time. */
  private admitting: Promise<boolean> = Promise.resolve(true);
  private running: Promise<void> | undefined;
  /** Containers that had exited at the last relist, by id. */
  private exited = new Set<string>();
  /** Pods whose finish was done (their containers stopped, their final status written): key → uid. */
  private readonly finished = new Map<string, string>();
  /** When each pod not yet running was first seen (with metrics): key → uid and performance.now(); `at` -1 once it ran. */
  private readonly firstSeen = new Map<string, { uid: string | undefined; at: number }>();

  constructor(private readonly options: PodWorkersOptions) {
    this.queue = new WorkQueue<string>({ name: `pods@${options.nodeName}`, component: `kubelet/${options.nodeName}`, baseDelayMs: 500, maxDelayMs: 30_000 });
    const enqueue = (pod: Pod) => {
      const key = objectKey(pod);
      if (
        options.metrics &&
        this.firstSeen.get(key)?.uid !== pod.metadata.uid &&
        !pod.metadata.deletionTimestamp &&
        pod.status?.phase !== 'Running' &&
        !isPodTerminal(pod)
      )
        this.firstSeen.set(key, { uid: pod.metadata.uid, at: performance.now() });
      this.queue.add(key);
    };
    options.pods.addHandlers({ add: enqueue, update: (_old, pod) => enqueue(pod), delete: enqueue });
  }

  start(signal: AbortSignal): void {
    const { logger, workers = 4, relistMs = CONTAINER_RELIST_MS } = this.options;
    this.running = runWorkers(this.queue, workers, (key) => this.sync(key), { logger, signal, maxRetries: Number.POSITIVE_INFINITY });
    const relist = setInterval(() => void this.relist().catch((err: unknown) => logger.warn({ err }, 'listing the runtime containers failed')), relistMs);
    relist.unref();
    const housekeeping = setInterval(
      () => void this.removeOrphanFiles().catch((err: unknown) => logger.warn({ err }, 'removing the files of pods that are gone failed')),
      HOUSEKEEPING_MS,
    );
    housekeeping.unref();
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(relist);
        clearInterval(housekeeping);
        this.options.probes.stop();
      },
      { once: true },
    );
  }

  /** Syncs the pod soon (a probe changed its verdict, say). */
  resync(pod: Pod): void {
    this.queue.add(objectKey(pod));
  }

  /**
   * Removes the folders (volumes, hosts file, logs) of pods this node no longer has: neither bound to it nor
   * holding a sandbox (deleted while the kubelet was away, or whose removal failed halfway).
   */
  async removeOrphanFiles(): Promise<void> {
    const { pods, manager, volumes } = this.options;
    const sandboxes = await manager.sandboxUids();
    // The informer is read when each folder is decided on: a pod added while the runtime was listed is wanted.
    await volumes.removeOrphans((uid) => sandboxes.has(uid) || pods.list().some((pod) => pod.metadata.uid === uid));
  }

  /**
   * A container that exits on its own (a job's process finishing) changes nothing the pod informer sees:
   * list the runtime's containers and sync the pods of those that exited since the last look.
   */
  private async relist(): Promise<void> {
    const exited = new Set<string>();
    for (const container of await this.options.runtime.listContainers()) {
      if (container.state !== 'CONTAINER_EXITED') continue;
      exited.add(container.id);
      if (this.exited.has(container.id)) continue;
      const namespace = container.labels?.[CRI_LABELS.POD_NAMESPACE];
      const name = container.labels?.[CRI_LABELS.POD_NAME];
      if (namespace && name && this.options.pods.get(`${namespace}/${name}`)) this.queue.add(`${namespace}/${name}`);
    }
    this.exited = exited;
  }

  /** Resolves once the workers have finished after the start signal aborted. */
  async stopped(): Promise<void> {
    await this.running;
  }

  private async sync(key: string): Promise<void> {
    const { pods, manager } = this.options;
    const pod = pods.get(key);
    if (!pod) {
      const { namespace = '', name } = splitObjectKey(key);
      const uids = new Set(await manager.killPod(namespace, name, 0));
      const admitted = this.admitted.get(key);
      if (admitted) uids.add(admitted);
      for (const uid of uids) await this.options.volumes.removePod(uid);
      this.forget(key);
      return;
    }
    if (pod.metadata.deletionTimestamp) return this.terminate(pod);
    if (isPodTerminal(pod)) return this.finish(pod);
    if (!(await this.admit(pod))) return;
    const deadline = activeDeadline(pod);
    if (deadline !== undefined && deadline <= Date.now()) {
      this.options.recorder.event(pod, 'Normal', DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_MESSAGE);
      return this.finish(pod, { phase: 'Failed', reason: DEADLINE_EXCEEDED, message: DEADLINE_EXCEEDED_MESSAGE });
    }

    const observed = await manager.sync(pod, this.eventsFor(pod));
    this.withProbes(pod, observed);
    const context: PodSyncContext = { pod, node: this.options.node(), runtime: this.options.runtime, reasons: [] };
    await this.options.hooks.podSync.promise(context);
    const status = buildPodStatus(pod, observed, this.statusContext());
    if (context.reasons.length) status.message = context.reasons.join('; ');
    await this.writeStatus(pod, status);
    if (status.phase === 'Running') this.started(key, pod);
    if (observed.incomplete) {
      const reasons = [...observed.initContainers, ...observed.containers, ...observed.ephemeralContainers].flatMap((c) =>
        c.waiting && c.waiting.reason !== 'PodInitializing' ? [c.waiting.reason] : [],
      );
      throw new SyncIncomplete(key, reasons);
    }
    const untilDeadline = deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, deadline - Date.now());
    this.queue.addAfter(key, Math.min(this.options.resyncMs, observed.retryAfterMs ?? Number.POSITIVE_INFINITY, untilDeadline));
  }

  /**
   * A pod that has finished (or must, with `outcome`): its running containers are stopped within its grace period,
   * its sandbox and network with them, its volumes torn down; the exited containers stay with their logs until
   * the pod is deleted. Its status then shows the containers as they ended. Done once per pod and kubelet run.
   */
  private async finish(pod: Pod, outcome?: PodOutcome): Promise<void> {
    const key = objectKey(pod);
    const uid = pod.metadata.uid!;
    if (this.finished.get(key) === uid) return;
    this.options.probes.removePod(uid);
    const grace = pod.spec.terminationGracePeriodSeconds ?? 30;
    const observed = await this.options.manager.stopPod(pod, grace, this.eventsFor(pod));
    // Nothing uses the volumes any more (memory-backed emptyDirs would hold RAM).
    await this.options.volumes.tearDown(uid, pod, this.eventsFor(pod));
    if (observed) {
      if (pod.status?.podIP) observed.podIP = pod.status.podIP;
      await this.writeStatus(pod, buildPodStatus(pod, observed, this.statusContext(), outcome));
    } else if (outcome) {
      await this.writeStatus(pod, rejectedPodStatus(pod, { reason: outcome.reason ?? '', message: outcome.message ?? '' }, this.statusContext()));
    }
    this.finished.set(key, uid);
  }

  /** Starts, follows or stops the pod's probes, and puts what they say into the observation. */
  private withProbes(pod: Pod, observed: PodObservation): void {
    const { probes } = this.options;
    probes.update(pod, observed);
    const uid = pod.metadata.uid!;
    const annotate = (containers: Container[], observations: ContainerObservation[]) =>
      containers.forEach((container, i) => {
        const observation = observations[i];
        if (observation) Object.assign(observation, probes.status(uid, container, observation.status?.id));
      });
    annotate(pod.spec.initContainers ?? [], observed.initContainers);
    annotate(pod.spec.containers, observed.containers);
  }

  /**
   * Node-level admission, once per pod and one pod at a time (each is judged against those admitted before it):
   * upstream's general checks first, then the podAdmit hook's handlers. A rejected pod is marked Failed and never started.
   */
  private async admit(pod: Pod): Promise<boolean> {
    const key = objectKey(pod);
    const uid = pod.metadata.uid!;
    const previous = this.admitted.get(key);
    if (previous === uid) return true;
    const earlier = this.rejected.get(key);
    if (earlier?.uid === uid) {
      // Its Failed status has not been written yet (the write failed, say).
      await this.writeStatus(pod, rejectedPodStatus(pod, earlier.rejection, this.statusContext()));
      return false;
    }
    const decision = this.admitting.then(async () => {
      if (previous) await this.removeReplaced(key, previous);
      let node = this.options.node();
      const others = this.activePodsBefore(pod);
      let rejection = generalPredicates(pod, node, others);
      // The Node this kubelet last wrote may predate a label or taint the scheduler already saw: read it again
      // before refusing the pod.
      if (rejection) {
        node = await this.options.client.get<Node>(RESOURCES.nodes, node.metadata.name!).catch(() => node);
        rejection = generalPredicates(pod, node, others);
      }
      rejection ??= await this.options.hooks.podAdmit.promise(pod, node);
      if (rejection) {
        this.rejected.set(key, { uid, rejection });
        this.options.recorder.event(pod, 'Warning', rejection.reason, rejection.message);
        await this.writeStatus(pod, rejectedPodStatus(pod, rejection, this.statusContext()));
        return false;
      }
      this.admitted.set(key, uid);
      return true;
    });
    this.admitting = decision.catch(() => false);
    return decision;
  }

  /**
   * The pods a new one is judged against, as upstream's kubelet has them: those it runs (admitted, or created before
   * this one: a restarted kubelet admits its pods again in the order they were created), not finished, not rejected.
   */
  private activePodsBefore(pod: Pod): Pod[] {
    const created = (candidate: Pod) => [candidate.metadata.creationTimestamp ?? '', candidate.metadata.name ?? ''].join('/');
    const uid = pod.metadata.uid;
    return this.options.pods.list().filter((other) => {
      const otherUid = other.metadata.uid!;
      const otherKey = objectKey(other);
      if (otherUid === uid || this.rejected.get(otherKey)?.uid === otherUid || isPodTerminal(other)) return false;
      return this.admitted.get(otherKey) === otherUid || created(other) < created(pod);
    });
  }

  /** Stop everything the pod runs, then remove it from the API (grace 0, only this incarnation: uid precondition). */
  private async terminate(pod: Pod): Promise<void> {
    const { namespace, name, uid } = pod.metadata as { namespace: string; name: string; uid: string };
    const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
    this.options.probes.removePod(uid);
    await this.options.manager.killPod(namespace, name, grace, this.eventsFor(pod), pod);
    await this.options.volumes.removePod(uid, pod, this.eventsFor(pod));
    this.forget(objectKey(pod));
    try {
      await this.options.client.delete(RESOURCES.pods, name, namespace, { gracePeriodSeconds: 0, preconditions: { uid } });
    } catch (err) {
      // Already gone, or a new pod took the name: either way this one is done.
      if (!isApiError(err, 'NotFound') && !isApiError(err, 'Conflict')) throw err;
    }
  }

  /**
   * An earlier pod of the same name (deleted and recreated before this worker saw the deletion): stop its
   * probes, drop its back-off and pulls, kill its sandbox and remove its volumes and files.
   */
  private async removeReplaced(key: string, uid: string): Promise<void> {
    this.forget(key);
    await this.options.manager.killOrphans((_namespace, _name, sandboxUid) => sandboxUid !== uid);
    await this.options.volumes.removePod(uid);
  }

  /** Drops what this node remembered about a pod that is gone. */
  /** The pod runs: the first time, how long since it was first seen is observed. */
  private started(key: string, pod: Pod): void {
    const seen = this.firstSeen.get(key);
    if (!seen || seen.at < 0 || seen.uid !== pod.metadata.uid) return;
    this.options.metrics?.podStarted((performance.now() - seen.at) / 1000);
    seen.at = -1;
  }

  private forget(key: string): void {
    this.firstSeen.delete(key);
    const uid = this.admitted.get(key);
    if (uid) {
      this.options.manager.forget(uid);
      this.options.probes.removePod(uid);
    }
    this.admitted.delete(key);
    this.finished.delete(key);
    this.rejected.delete(key);
  }

  private async writeStatus(pod: Pod, status: PodStatus): Promise<void> {
    if (sameStatus(pod.status, status)) return;
    const updated: Pod = { ...{}, ...structuredClone(pod), status };
    await this.options.client.updateStatus(RESOURCES.pods, updated);
  }

  private eventsFor(pod: Pod): PodEventSink {
    return (type, reason, message) => this.options.recorder.event(pod, type, reason, message);
  }

  private statusContext(): StatusContext {
    return { hostIP: this.options.hostIP, runtimeName: this.options.runtime.name, now: rfc3339(Date.now()) };
  }
}
