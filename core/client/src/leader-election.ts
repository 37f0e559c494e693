import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { errorMessage, isApiError, RESOURCES, type Lease, type LeaseSpec } from '@skiff/api';
import type { ApiClient, Logger } from '@skiff/kernel';
import { sleep } from './abortable.js';
import { silentLogger } from './silent-logger.js';

/** Upstream's defaults (client-go leaderelection, kube-controller-manager and kube-scheduler flags). */
export const LEADER_ELECTION_DEFAULTS = Object.freeze({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });

/** Campaigns retry after retryPeriod × (1 + up to this factor), so candidates do not poll in step. */
const JITTER_FACTOR = 1.2;

/** What a LeaderElector tells its owner. */
export interface LeaderCallbacks {
  /**
   * This candidate leads from now on: start the work. `signal` aborts the moment leadership is lost or the
   * elector stops. Not awaited: the lease is renewed while the work starts.
   */
  startedLeading(signal: AbortSignal): void | Promise<void>;
  /** Leadership is gone (lost, or the elector stops): stop the work at once. Only called after `startedLeading`. */
  stoppedLeading(): void | Promise<void>;
  /** Another candidate (or this one) was seen holding the lease. */
  newLeader?(identity: string): void;
}

/** A LeaderElector's lock, timing and callbacks; durations in milliseconds. */
export interface LeaderElectorOptions {
  /** Reads and writes the Lease (its user needs get, create and update on leases). */
  client: ApiClient;
  /** The Lease that is the lock: coordination.k8s.io/v1, in `namespace`. */
  lease: { name: string; namespace: string };
  /** Who this candidate is; default `<hostname>_<random uuid>`. */
  identity?: string;
  /** How long others wait, from when they last saw the lease change, before they take it (default 15 s). */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leading (default 10 s). */
  renewDeadlineMs?: number;
  /** How often candidates try to acquire and the leader renews (default 2 s). */
  retryPeriodMs?: number;
  callbacks: LeaderCallbacks;
  /** Where the elector says when it leads, stops leading, sees a new leader, or cannot reach the lease. */
  logger?: Logger;
}

/**
 * Leader election over a coordination.k8s.io/v1 Lease, with client-go's semantics: a candidate takes a lease
 * that is free or that nobody renewed for leaseDuration (judged by its own clock, from the moment it last saw
 * the lease change); the leader renews every retryPeriod and stops leading as soon as it cannot renew within
 * renewDeadline, then campaigns again. Writes carry the resourceVersion they read, so of two candidates racing
 * for one lease only one wins (the other gets 409 Conflict and tries again next period). `stop` ends the
 * leader's work first and then releases the lease, so another candidate takes it at its next try.
 */
export class LeaderElector {
  /** This candidate's holderIdentity. */
  readonly identity: string;
  private readonly options: Required<Omit<LeaderElectorOptions, 'logger' | 'identity'>>;
  private readonly logger: Logger;
  private readonly abort = new AbortController();
  /** The lease as last read or written, and when (by this process's clock) its spec was first seen as it is. */
  private observed: { lease: Lease; at: number } | undefined;
  private leading: AbortController | undefined;
  private stopping: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private lastLeader: string | undefined;
  /** Whether the last attempt left this candidate holding the lease (it may not have started leading yet). */
  private held = false;

  constructor(options: LeaderElectorOptions) {
    const timing = { ...{}, ...LEADER_ELECTION_DEFAULTS, ...definedOnly(options) };
    const problem = leaderElectionTimingProblem(timing);
    if (problem) throw new RangeError(problem);
    this.options = { ...{}, ...options, ...timing };
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.logger = (options.logger ?? silentLogger).child({ lease: `${options.lease.namespace}/${options.lease.name}`, identity: this.identity });
    setMaxListeners(0, this.abort.signal);
  }

  /** Whether this candidate holds the lease right now. */
  get isLeader(): boolean {
    return this.leading !== undefined;
  }

  /** The holder last seen on the lease ('' when it is free, undefined before the first read). */
  get leader(): string | undefined {
    return this.observed?.lease.spec?.holderIdentity;
  }

  /** Starts campaigning in the background; campaigns again after every loss until `stop`. */
  start(): void {
    this.loop ??= this.run().catch((err: unknown) => this.logger.error({ err }, 'leader election stopped with an error'));
  }

  /** Stops campaigning; a leader stops its work (stoppedLeading) and then releases the lease. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort();
      await this.loop;
      await this.stopLeading('the elector stops');
      if (this.held) await this.release();
    })();
    return this.stopping;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      if (!(await this.acquire(signal)) || signal.aborted) return;
      this.leading = new AbortController();
      this.logger.info({}, 'became leader');
      const work = this.leading.signal;
      void Promise.resolve()
        .then(() => this.options.callbacks.startedLeading(work))
        .catch((err: unknown) => this.logger.error({ err }, 'the leader failed to start its work'));
      if (!(await this.renew(signal))) return;
      await this.stopLeading('the lease could not be renewed in time');
    }
  }

  /** Tries every retryPeriod (jittered) until the lease is ours; false when the elector stops first. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.logger.debug({}, 'campaigning for the lease');
    while (!signal.aborted) {
      // A request that hangs (a network that drops packets) must not stop the campaign: it counts as failed at renewDeadline.
      if ((await this.beforeDeadline(this.tryAcquireOrRenew(), Date.now() + this.options.renewDeadlineMs)) === true) return true;
      await sleep(this.options.retryPeriodMs * (1 + Math.random() * JITTER_FACTOR), signal);
    }
    return false;
  }

  /**
   * Renews every retryPeriod. A round retries until renewDeadline has passed since it began; then leadership
   * is lost (true). False when the elector stops while still leading.
   */
  private async renew(signal: AbortSignal): Promise<boolean> {
    const { retryPeriodMs, renewDeadlineMs } = this.options;
    while (!signal.aborted) {
      const deadline = Date.now() + renewDeadlineMs;
      let renewed = false;
      while (!renewed && !signal.aborted && Date.now() < deadline) {
        renewed = (await this.beforeDeadline(this.tryAcquireOrRenew(), deadline)) === true;
        if (!renewed) await sleep(Math.min(retryPeriodMs, Math.max(0, deadline - Date.now())), signal);
      }
      if (signal.aborted) return false;
      if (!renewed) {
        this.held = false;
        return true;
      }
      await sleep(retryPeriodMs, signal);
    }
    return false;
  }

  /** A request still in flight at the deadline does not count: the answer may come after the lease has run out. */
  private beforeDeadline(attempt: Promise<boolean>, deadline: number): Promise<boolean | 'late'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()))));
    return Promise.race([attempt, late]).finally(() => clearTimeout(timer));
  }

  private async stopLeading(reason: string): Promise<void> {
    const leading = this.leading;
    if (!leading) return;
    this.leading = undefined;
    leading.abort();
    this.logger.info({ reason }, 'stopped leading');
    try {
      await this.options.callbacks.stoppedLeading();
    } catch (err) {
      this.logger.error({ err }, 'the leader failed to stop its work');
    }
  }

  /** One attempt: create the lease, take it over, or renew it. True when this candidate holds it afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    this.held = await this.attempt();
    return this.held;
  }

  private async attempt(): Promise<boolean> {
    const { client, lease: lock } = this.options;
    const now = Date.now();
    let current: Lease;
    try {
      current = await client.get<Lease>(RESOURCES.leases, lock.name, lock.namespace);
    } catch (err) {
      if (!isApiError(err, 'NotFound')) return this.failed('cannot read the lease', err);
      return this.create(now);
    }
    this.observe(current, now);
    const spec = current.spec ?? {};
    const heldByOther = !!spec.holderIdentity && spec.holderIdentity !== this.identity;
    if (heldByOther && this.observed!.at + this.durationOf(spec) > now) {
      this.logger.debug({ holder: spec.holderIdentity }, 'the lease is held by another candidate');
      return false;
    }
    const holding = spec.holderIdentity === this.identity;
    const next: Lease = {
      ...{},
      ...current,
      spec: {
        ...{},
        ...spec,
        ...this.ownSpec(now),
        acquireTime: holding && spec.acquireTime ? spec.acquireTime : microTime(now),
        leaseTransitions: holding ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      this.observe(await client.update<Lease>(RESOURCES.leases, next), now);
      return true;
    } catch (err) {
      if (isApiError(err, 'Conflict')) {
        this.logger.debug({}, 'another candidate wrote the lease first (409 Conflict)');
        return false;
      }
      return this.failed('cannot write the lease', err);
    }
  }

  private async create(now: number): Promise<boolean> {
    const { client, lease: lock } = this.options;
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: lock.name, namespace: lock.namespace },
      spec: { ...{}, ...this.ownSpec(now), acquireTime: microTime(now), leaseTransitions: 0 },
    };
    try {
      this.observe(await client.create<Lease>(RESOURCES.leases, lease, lock.namespace), now);
      return true;
    } catch (err) {
      if (isApiError(err, 'AlreadyExists')) {
        this.logger.debug({}, 'another candidate created the lease first');
        return false;
      }
      return this.failed('cannot create the lease', err);
    }
  }

  /** Gives the lease up: no holder, so the next candidate to try takes it without waiting for it to expire. */
  private async release(): Promise<void> {
    const observed = this.observed?.lease;
    if (!observed || observed.spec?.holderIdentity !== this.identity) return;
    const now = microTime(Date.now());
    const released: Lease = {
      ...{},
      ...observed,
      spec: { ...{}, ...observed.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
    };
    try {
      await this.options.client.update<Lease>(RESOURCES.leases, released);
      this.logger.info({}, 'released the lease');
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'could not release the lease; another candidate takes it once it expires');
    }
  }

  private ownSpec(now: number): LeaseSpec {
    return { holderIdentity: this.identity, leaseDurationSeconds: Math.ceil(this.options.leaseDurationMs / 1000), renewTime: microTime(now) };
  }

  /** The lease's own duration when it states one (the holder's setting), else this candidate's. */
  private durationOf(spec: LeaseSpec): number {
    return spec.leaseDurationSeconds ? spec.leaseDurationSeconds * 1000 : this.options.leaseDurationMs;
  }

  /** Remembers the lease; the clock for its expiry restarts only when its spec changed. */
  private observe(lease: Lease, now: number): void {
    const changed = !this.observed || JSON.stringify(this.observed.lease.spec ?? {}) !== JSON.stringify(lease.spec ?? {});
    this.observed = { lease, at: changed ? now : this.observed!.at };
    const holder = lease.spec?.holderIdentity;
    if (holder && holder !== this.lastLeader) {
      this.lastLeader = holder;
      if (holder !== this.identity) this.logger.info({ leader: holder }, 'new leader');
      this.options.callbacks.newLeader?.(holder);
    }
  }

  private failed(what: string, err: unknown): false {
    this.logger.warn({ err: errorMessage(err) }, what);
    return false;
  }
}

/**
 * What is wrong with these durations, if anything: the leader must give up before others may take over, and retry
 * at least once within the renew deadline (client-go's rule).
 */
export function leaderElectionTimingProblem(timing: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number }): string | undefined {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = timing;
  if (retryPeriodMs > 0 && renewDeadlineMs > JITTER_FACTOR * retryPeriodMs && leaseDurationMs > renewDeadlineMs) return undefined;
  return `leader election needs leaseDuration > renewDeadline > ${JITTER_FACTOR} × retryPeriod > 0 (got ${leaseDurationMs} ms, ${renewDeadlineMs} ms, ${retryPeriodMs} ms)`;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function definedOnly(options: LeaderElectorOptions): Partial<typeof LEADER_ELECTION_DEFAULTS> {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = options;
  return Object.fromEntries(Object.entries({ leaseDurationMs, renewDeadlineMs, retryPeriodMs }).filter(([, value]) => value !== undefined));
}
