import type { Pod } from '@skiff/api';
import { currentTrace, tracingActive, type ClusterEventAction, type ClusterEventResource, type TraceContext } from '@skiff/kernel';
import { Heap } from './heap.js';

/** A change in the cluster, as the queue matches it against what rejected a parked pod. */
export interface QueueEvent {
  resource: ClusterEventResource;
  actions: readonly ClusterEventAction[];
}

/** A pending pod as the queue tracks it. */
export interface QueuedPod {
  key: string;
  /** The latest version of the pod the informer delivered. */
  pod: Pod;
  /** Scheduling attempts so far (failed ones push the backoff out). */
  attempts: number;
  /** Order of (re)entry into the active queue: FIFO among pods the sort calls equal. */
  sequence: number;
  /** The pod is not retried before this time (ms since the epoch). */
  backoffUntil: number;
  /** When it was parked as unschedulable. */
  parkedAt: number;
  /** The plugins that rejected it last time: only events they registered bring it back. Empty: any event. */
  unschedulablePlugins: ReadonlySet<string>;
  /** Why a preEnqueue plugin holds it back (SchedulingGates), while it is gated. */
  gatedBy?: string;
  /** When it first entered the queue (performance.now()): the start of its end-to-end scheduling time. */
  queuedAt: number;
  /** When its current or last scheduling attempt began (performance.now()). */
  attemptStartedAt?: number;
  /** The trace the pod's last event continues, while tracing (docs/tracing.md); its next attempt is a span of it. */
  trace?: TraceContext;
}

type Place = 'active' | 'backoff' | 'unschedulable' | 'inFlight' | 'gated';

interface Entry {
  info: QueuedPod;
  place: Place;
  /** Bumped on every move, so heap slots left behind by a move are recognised as stale. */
  generation: number;
}

interface Slot {
  entry: Entry;
  generation: number;
}

export interface SchedulingQueueOptions {
  /** Orders the active queue: a queueSort plugin's comparator; default: oldest creationTimestamp first. */
  compare?: (a: Pod, b: Pod) => number;
  /** Backoff after the first failure, doubling per failure up to `backoffMaxMs` (Kubernetes: 1 s … 10 s). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Unschedulable pods are retried at least this often even when nothing changes (Kubernetes: 5 min). */
  unschedulableRetryMs?: number;
  now?: () => number;
  /** Whether `plugin` registered interest in `event` (default: every plugin in every event). */
  interested?: (plugin: string, event: QueueEvent) => boolean;
  /** preEnqueue: the name of the plugin that holds the pod back, or undefined to let it in. */
  gate?: (pod: Pod) => string | undefined;
}

function byCreation(a: Pod, b: Pod): number {
  const left = a.metadata.creationTimestamp ?? '';
  const right = b.metadata.creationTimestamp ?? '';
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Kubernetes' scheduling queue: an active heap the scheduler pops from, a backoff heap for pods that just
 * failed, and a parking area for unschedulable pods that only a cluster change (a node added, a pod
 * gone) can help — `moveAllToActive` sends those back. A pod is in at most one place at a time.
 */
export class SchedulingQueue {
  private readonly entries = new Map<string, Entry>();
  private readonly active: Heap<Slot>;
  private readonly backoff = new Heap<Slot>((a, b) => a.entry.info.backoffUntil < b.entry.info.backoffUntil);
  private readonly waiters: (() => void)[] = [];
  private readonly backoffInitialMs: number;
  private readonly backoffMaxMs: number;
  private readonly unschedulableRetryMs: number;
  private readonly now: () => number;
  private readonly interested: (plugin: string, event: QueueEvent) => boolean;
  private readonly gate: (pod: Pod) => string | undefined;
  private sequence = 0;
  private cycle = 0;
  /** The cycle during which a cluster change last asked for a retry of parked pods. */
  private moveRequestCycle = -1;
  private backoffTimer: NodeJS.Timeout | undefined;
  private readonly parkedTimer: NodeJS.Timeout;
  private closed = false;
  private wakeQueued = false;

  constructor(options: SchedulingQueueOptions = {}) {
    const compare = options.compare ?? byCreation;
    this.active = new Heap<Slot>((a, b) => {
      const order = compare(a.entry.info.pod, b.entry.info.pod);
      return order !== 0 ? order < 0 : a.entry.info.sequence < b.entry.info.sequence;
    });
    this.backoffInitialMs = options.backoffInitialMs ?? 1000;
    this.backoffMaxMs = options.backoffMaxMs ?? 10_000;
    this.unschedulableRetryMs = options.unschedulableRetryMs ?? 5 * 60_000;
    this.now = options.now ?? Date.now;
    this.interested = options.interested ?? (() => true);
    this.gate = options.gate ?? (() => undefined);
    this.parkedTimer = setInterval(() => this.retryLongParked(), Math.min(this.unschedulableRetryMs, 30_000));
    this.parkedTimer.unref();
  }

  /**
   * Adds a pending pod, or refreshes the queued copy. With `retryParked`, a parked pod gets another
   * try (its spec changed); a status-only change (our own condition update) leaves it parked.
   */
  add(key: string, pod: Pod, retryParked = true): void {
    if (this.closed) return;
    const entry = this.entries.get(key);
    const trace = tracingActive() ? currentTrace() : undefined;
    if (trace && entry) entry.info.trace = trace;
    if (!entry) {
      const info: QueuedPod = {
        key,
        pod,
        attempts: 0,
        sequence: 0,
        backoffUntil: 0,
        parkedAt: 0,
        unschedulablePlugins: new Set(),
        queuedAt: performance.now(),
      };
      if (trace) info.trace = trace;
      const fresh: Entry = { info, place: 'active', generation: 0 };
      this.entries.set(key, fresh);
      const gatedBy = this.gate(pod);
      if (gatedBy) this.park(fresh, gatedBy);
      else this.activate(fresh);
      return;
    }
    entry.info.pod = pod;
    if (entry.place === 'gated') {
      const gatedBy = this.gate(pod);
      if (gatedBy) entry.info.gatedBy = gatedBy;
      else {
        delete entry.info.gatedBy;
        this.activate(entry);
      }
      return;
    }
    if (retryParked && entry.place === 'unschedulable') this.release(entry);
  }

  private park(entry: Entry, gatedBy: string): void {
    entry.place = 'gated';
    entry.generation++;
    entry.info.gatedBy = gatedBy;
  }

  /** Pods a preEnqueue plugin holds back, by key. */
  gated(): string[] {
    return [...this.entries.values()].filter((entry) => entry.place === 'gated').map((entry) => entry.info.key);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Pods waiting (active, backing off or parked), not counting the ones being scheduled. */
  get pending(): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.place !== 'inFlight') count++;
    return count;
  }

  /** How many pods wait in each place (upstream's scheduler_pending_pods queues); pods being scheduled are not counted. */
  counts(): { active: number; backoff: number; unschedulable: number; gated: number } {
    const counts = { active: 0, backoff: 0, unschedulable: 0, gated: 0 };
    for (const entry of this.entries.values()) if (entry.place !== 'inFlight') counts[entry.place]++;
    return counts;
  }

  /** The next pod to schedule; waits for one. Resolves undefined once the queue is closed or `signal` aborts. */
  pop(signal?: AbortSignal): Promise<{ info: QueuedPod; cycle: number } | undefined> {
    return new Promise((resolve) => {
      const attempt = () => {
        if (this.closed || signal?.aborted) return resolve(undefined);
        const next = this.takeActive();
        if (!next) return void this.waiters.push(attempt);
        signal?.removeEventListener('abort', abandon);
        resolve(next);
      };
      const abandon = () => {
        const index = this.waiters.indexOf(attempt);
        if (index >= 0) this.waiters.splice(index, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', abandon, { once: true });
      attempt();
    });
  }

  /** The pod was bound: forget it. */
  done(key: string): void {
    const entry = this.entries.get(key);
    if (entry?.place === 'inFlight') this.entries.delete(key);
  }

  /**
   * The pod popped in `cycle` did not fit. It backs off, then waits parked for a cluster change — unless a
   * change already happened while it was being scheduled, in which case it only backs off.
   */
  requeueUnschedulable(key: string, cycle: number, plugins: ReadonlySet<string> = new Set()): void {
    const entry = this.entries.get(key);
    if (!entry || entry.place !== 'inFlight') return;
    const info = entry.info;
    info.unschedulablePlugins = plugins;
    info.backoffUntil = this.backoffEnd(info);
    if (this.moveRequestCycle >= cycle) {
      this.release(entry);
    } else {
      entry.place = 'unschedulable';
      entry.generation++;
      info.parkedAt = this.now();
    }
  }

  /**
   * Scheduling the pod failed with an error (a plugin threw, the binding failed) rather than finding it no
   * place: a cluster change would not help, so it is not parked; it backs off and is tried again.
   */
  requeueAfterError(key: string): void {
    const entry = this.entries.get(key);
    if (!entry || entry.place !== 'inFlight') return;
    entry.info.backoffUntil = this.backoffEnd(entry.info);
    this.release(entry);
  }

  /**
   * Something changed in the cluster that may help parked pods: retry those whose rejecting plugins
   * registered this kind of change (all of them without an event), after their backoff.
   */
  moveAllToActive(event?: QueueEvent): void {
    this.moveRequestCycle = this.cycle;
    for (const entry of this.entries.values()) {
      if (entry.place !== 'unschedulable') continue;
      const plugins = entry.info.unschedulablePlugins;
      if (!event || plugins.size === 0 || [...plugins].some((plugin) => this.interested(plugin, event))) this.release(entry);
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.parkedTimer);
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Backoff doubles with every attempt, up to the maximum. */
  private backoffEnd(info: QueuedPod): number {
    return this.now() + Math.min(this.backoffInitialMs * 2 ** Math.max(info.attempts - 1, 0), this.backoffMaxMs);
  }

  private takeActive(): { info: QueuedPod; cycle: number } | undefined {
    for (let slot = this.active.pop(); slot; slot = this.active.pop()) {
      const { entry, generation } = slot;
      if (entry.generation !== generation || entry.place !== 'active' || this.entries.get(entry.info.key) !== entry) continue;
      entry.place = 'inFlight';
      entry.generation++;
      entry.info.attempts++;
      return { info: entry.info, cycle: ++this.cycle };
    }
    return undefined;
  }

  private activate(entry: Entry): void {
    entry.place = 'active';
    entry.generation++;
    entry.info.sequence = ++this.sequence;
    this.active.push({ entry, generation: entry.generation });
    // Woken after the current synchronous run: pods released together (moveAllToActive, a batch of informer
    // events) are all in the heap before the next pop, so the queue's order decides among them.
    if (this.waiters.length > 0 && !this.wakeQueued) {
      this.wakeQueued = true;
      queueMicrotask(() => {
        this.wakeQueued = false;
        this.waiters.shift()?.();
      });
    }
  }

  /** Out of the parking area: straight to active, or to backoff while the backoff lasts. */
  private release(entry: Entry): void {
    if (entry.info.backoffUntil <= this.now()) {
      this.activate(entry);
      return;
    }
    entry.place = 'backoff';
    entry.generation++;
    this.backoff.push({ entry, generation: entry.generation });
    this.armBackoffTimer();
  }

  private armBackoffTimer(): void {
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.backoffTimer = undefined;
    const next = this.peekBackoff();
    if (!next || this.closed) return;
    this.backoffTimer = setTimeout(() => this.flushBackoff(), Math.max(next.entry.info.backoffUntil - this.now(), 0));
    this.backoffTimer.unref();
  }

  private peekBackoff(): Slot | undefined {
    for (let slot = this.backoff.peek(); slot; slot = this.backoff.peek()) {
      const { entry, generation } = slot;
      if (entry.generation === generation && entry.place === 'backoff' && this.entries.get(entry.info.key) === entry) return slot;
      this.backoff.pop();
    }
    return undefined;
  }

  private flushBackoff(): void {
    const now = this.now();
    for (let slot = this.peekBackoff(); slot && slot.entry.info.backoffUntil <= now; slot = this.peekBackoff()) {
      this.backoff.pop();
      this.activate(slot.entry);
    }
    this.armBackoffTimer();
  }

  private retryLongParked(): void {
    const cutoff = this.now() - this.unschedulableRetryMs;
    for (const entry of this.entries.values()) {
      if (entry.place === 'unschedulable' && entry.info.parkedAt <= cutoff) this.release(entry);
    }
  }
}
