import { errorMessage, type Container, type Pod, type Probe } from '@skiff/api';
import type { ContainerStatusInfo, Logger } from '@skiff/kernel';
import type { PodEventSink } from '../pods/events.js';
import type { ContainerObservation, PodObservation } from '../pods/pod-runtime.js';
import type { ActionRunner } from './actions.js';

export type ProbeType = 'startup' | 'liveness' | 'readiness';

const PROBE_FIELD: Record<ProbeType, 'startupProbe' | 'livenessProbe' | 'readinessProbe'> = {
  startup: 'startupProbe',
  liveness: 'livenessProbe',
  readiness: 'readinessProbe',
};
const TITLE: Record<ProbeType, string> = { startup: 'Startup', liveness: 'Liveness', readiness: 'Readiness' };

export interface ProbeManagerOptions {
  runner: ActionRunner;
  /** Something the pod's status shows changed (a container became ready, started, or was killed): sync the pod. */
  onChange(pod: Pod): void;
  /**
   * Kills a container its liveness or startup probe gave up on (preStop, then stop within the grace period),
   * with a Killing event saying `message`.
   */
  kill(pod: Pod, container: Container, containerId: string, gracePeriodSeconds: number, message: string): Promise<void>;
  events(pod: Pod): PodEventSink;
  logger: Logger;
  /** How long a probe "second" lasts, in milliseconds (tests shrink it). */
  secondMs?: number;
}

/** What the probes say about a container instance, for its status. */
export interface ProbeStatus {
  /** Its startup probe succeeded (undefined: it has none). */
  started?: boolean;
  /** Its readiness probe succeeds (undefined: it has none). */
  ready?: boolean;
}

/** One probe of one container of a pod, following the container's current instance. */
class ProbeWorker {
  containerId: string | undefined;
  /** The probe's current verdict about this instance (a startup probe has none until it decides). */
  result: boolean | undefined;
  private lastRaw: boolean | undefined;
  private run = 0;
  /** A liveness or startup probe that killed the instance waits for the next one. */
  private onHold = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /**
   * Bumped whenever the worker stops following an instance (it exited, a new one started, the worker stopped):
   * a run that was in flight then compares it, and neither acts on its answer nor schedules the next run.
   */
  private generation = 0;
  pod!: Pod;
  container!: Container;
  podIP: string | undefined;

  constructor(
    readonly type: ProbeType,
    private readonly manager: ProbeManager,
  ) {
    this.result = ProbeWorker.initial(type);
  }

  /** Kubernetes' starting verdicts: alive until shown otherwise, not ready until shown ready, startup undecided. */
  static initial(type: ProbeType): boolean | undefined {
    return type === 'liveness' ? true : type === 'readiness' ? false : undefined;
  }

  get probe(): Probe {
    return this.container[PROBE_FIELD[this.type]] ?? {};
  }

  /** Follows the pod's latest sync: a new running instance starts the probe over; none stops it. */
  follow(pod: Pod, container: Container, instance: ContainerStatusInfo | undefined, podIP: string | undefined): void {
    this.pod = pod;
    this.container = container;
    this.podIP = podIP;
    if (instance?.state !== 'CONTAINER_RUNNING') {
      this.generation++;
      clearTimeout(this.timer);
      this.timer = undefined;
      if (this.type === 'readiness') this.result = false;
      return;
    }
    // Already probing this instance, done with it (a startup probe that succeeded), or waiting for the next one.
    if (instance.id === this.containerId && (this.timer || this.onHold || (this.type === 'startup' && this.result === true))) return;
    if (instance.id !== this.containerId) {
      this.generation++;
      this.containerId = instance.id;
      this.result = ProbeWorker.initial(this.type);
      this.lastRaw = undefined;
      this.run = 0;
      this.onHold = false;
    }
    const startedAt = instance.startedAt ?? instance.createdAt;
    const delay = Math.max(0, startedAt + (this.probe.initialDelaySeconds ?? 0) * this.manager.secondMs - Date.now());
    this.schedule(delay);
  }

  stop(): void {
    this.stopped = true;
    this.generation++;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.probeOnce(), delayMs);
    this.timer.unref();
  }

  private async probeOnce(): Promise<void> {
    const containerId = this.containerId;
    const generation = this.generation;
    try {
      await this.attempt(containerId!, generation);
    } catch (err) {
      this.manager.logger.warn({ err, pod: `${this.pod.metadata.namespace}/${this.pod.metadata.name}`, container: this.container.name }, 'probe failed to run');
    }
    // Following stopped (or moved to another instance) while this run was in flight: whoever changed it owns the timer.
    if (this.generation !== generation) return;
    if (!this.stopped && !this.onHold && !(this.type === 'startup' && this.result === true))
      this.schedule((this.probe.periodSeconds ?? 10) * this.manager.secondMs);
    else this.timer = undefined;
  }

  private async attempt(containerId: string, generation: number): Promise<void> {
    const { pod, container } = this;
    // Liveness and readiness wait for a startup probe to succeed.
    if (this.type !== 'startup' && this.manager.startupPending(pod, container, containerId)) return;
    const probe = this.probe;
    const event = this.manager.options.events(pod);
    let outcome: boolean;
    try {
      const result = await this.manager.options.runner.run(probe, { pod, container, containerId, podIP: this.podIP }, probe.timeoutSeconds ?? 1);
      // The instance exited (or the worker stopped) meanwhile: its answer is stale.
      if (this.generation !== generation) return;
      outcome = result.outcome === 'success';
      if (!outcome) event('Warning', 'Unhealthy', `${TITLE[this.type]} probe failed: ${result.output}`);
    } catch (err) {
      if (this.generation !== generation) return;
      // The probe could not run (the runtime failed): say so, and keep the verdict as it was.
      event('Warning', 'Unhealthy', `${TITLE[this.type]} probe errored: ${errorMessage(err)}`);
      return;
    }
    this.run = outcome === this.lastRaw ? this.run + 1 : 1;
    this.lastRaw = outcome;
    const threshold = outcome ? (probe.successThreshold ?? 1) : (probe.failureThreshold ?? 3);
    if (this.run < threshold || outcome === this.result) return;
    this.result = outcome;
    if (!outcome && this.type !== 'readiness') {
      this.onHold = true;
      this.run = 0;
      const grace = probe.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
      await this.manager.options.kill(pod, container, containerId, grace, `Container ${container.name} failed ${this.type} probe, will be restarted`);
    }
    this.manager.options.onChange(pod);
  }
}

/**
 * The kubelet's probe manager: a worker per probe of every running container, each on its own timer —
 * `initialDelaySeconds` after the container started, then every `periodSeconds`, each run within
 * `timeoutSeconds`; `successThreshold` successes or `failureThreshold` failures in a row change its verdict.
 * A startup probe holds the other two back until it succeeds; a liveness or startup probe that fails kills the
 * container (`Unhealthy`, then `Killing` … `will be restarted`) so the pod's restart policy restarts it; a
 * readiness probe decides the container's `ready`. Workers follow the pod's syncs and go with the pod.
 */
export class ProbeManager {
  private readonly workers = new Map<string, ProbeWorker>();
  /** Set by stop(): syncs still in flight when the kubelet stops must not start workers again. */
  private stopped = false;
  readonly secondMs: number;
  readonly logger: Logger;

  constructor(readonly options: ProbeManagerOptions) {
    this.secondMs = options.secondMs ?? 1000;
    this.logger = options.logger;
  }

  /** Brings the pod's probe workers in line with what its latest sync observed. */
  update(pod: Pod, observed: PodObservation): void {
    if (this.stopped) return;
    const uid = pod.metadata.uid!;
    const wanted = new Set<string>();
    const follow = (container: Container, observation: ContainerObservation | undefined) => {
      for (const type of ['startup', 'liveness', 'readiness'] as const) {
        if (!container[PROBE_FIELD[type]]) continue;
        const key = `${uid}/${container.name}/${type}`;
        wanted.add(key);
        let worker = this.workers.get(key);
        if (!worker) this.workers.set(key, (worker = new ProbeWorker(type, this)));
        worker.follow(pod, container, observation?.status, observed.podIP);
      }
    };
    // Probes of init containers only run for sidecars (restartPolicy Always), as in Kubernetes.
    (pod.spec.initContainers ?? []).forEach((container, i) => {
      if (container.restartPolicy === 'Always') follow(container, observed.initContainers[i]);
    });
    pod.spec.containers.forEach((container, i) => follow(container, observed.containers[i]));
    for (const [key, worker] of this.workers) {
      if (key.startsWith(`${uid}/`) && !wanted.has(key)) {
        worker.stop();
        this.workers.delete(key);
      }
    }
  }

  /** What the probes say about a container instance. */
  status(uid: string, container: Container, containerId: string | undefined): ProbeStatus {
    const verdict = (type: ProbeType): boolean | undefined => {
      if (!container[PROBE_FIELD[type]]) return undefined;
      const worker = this.workers.get(`${uid}/${container.name}/${type}`);
      return containerId !== undefined && worker?.containerId === containerId && worker.result === true;
    };
    const started = verdict('startup');
    const ready = started === false ? false : verdict('readiness');
    return { ...{}, ...(started !== undefined ? { started } : {}), ...(ready !== undefined ? { ready } : {}) };
  }

  /** Whether the container has a startup probe that has not succeeded for this instance yet. */
  startupPending(pod: Pod, container: Container, containerId: string): boolean {
    return this.status(pod.metadata.uid!, container, containerId).started === false;
  }

  /** Stops the probes of a pod that is gone. */
  removePod(uid: string): void {
    for (const [key, worker] of this.workers) {
      if (!key.startsWith(`${uid}/`)) continue;
      worker.stop();
      this.workers.delete(key);
    }
  }

  /** Stops every probe for good: later updates (from syncs still in flight) start none. */
  stop(): void {
    this.stopped = true;
    for (const worker of this.workers.values()) worker.stop();
    this.workers.clear();
  }
}
