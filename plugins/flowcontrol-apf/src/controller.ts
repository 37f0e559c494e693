import { errors, type FlowSchema, type PriorityLevelConfiguration } from '@skiff/api';
import type { FlowControlGrant, FlowControlRequest, FlowControlResult } from '@skiff/kernel';
import { CATCH_ALL, MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from './bootstrap.js';
import { classify, inMatchingOrder } from './classify.js';
import { FLOW_SCHEMA_UID_HEADER, PRIORITY_LEVEL_UID_HEADER } from './names.js';
import { LevelQueues, Rejection, type LevelSettings, type RejectReason } from './queue-set.js';
import { RetryAfter } from './retry-after.js';
import { flowHash } from './shuffle-shard.js';
import { estimateSeats, MAX_SEATS, MIN_SEATS, needsEstimate } from './work-estimate.js';

export interface FlowControllerOptions {
  /** Seats of the whole server, shared among the priority levels by their nominalConcurrencyShares. */
  serverConcurrencyLimit: number;
  /** How long a request may wait in a queue before it is rejected. */
  queueWaitLimitMs: number;
  /** What a request is assumed to take before it has run, for fair queuing's order (corrected when it ends). */
  estimatedServiceMs?: number;
  clock?: () => number;
}

/** What a request is taken to cost before its real duration is known. */
const DEFAULT_SERVICE_MS = 50;

interface Level {
  object: PriorityLevelConfiguration;
  /** Undefined for an exempt level: its requests never wait. */
  queues?: LevelQueues;
  retryAfter: RetryAfter;
  exemptExecuting: number;
}

/** A row of the priority-level dump. */
export interface LevelState {
  name: string;
  exempt: boolean;
  concurrencyLimit: number;
  activeQueues: number;
  waiting: number;
  executing: number;
  seatsInUse: number;
  dispatched: number;
  rejected: number;
  timedOut: number;
  cancelled: number;
}

/** Subresources whose requests run for as long as the client wants (Kubernetes' long-running check): not flow controlled. */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'portforward', 'proxy', 'log']);

/**
 * API Priority and Fairness for one server: classifies each request by the FlowSchemas, and admits it through the
 * fair queues of its priority level (exempt levels admit at once). Starts from the bootstrap configuration, so it
 * works before the stored objects are read; `configure` applies what is stored, live.
 */
export class FlowController {
  private ordered: FlowSchema[] = [];
  private levels = new Map<string, Level>();
  private readonly estimatedServiceMs: number;
  private readonly clock: () => number;
  private stopped = false;

  constructor(private readonly options: FlowControllerOptions) {
    this.estimatedServiceMs = options.estimatedServiceMs ?? DEFAULT_SERVICE_MS;
    this.clock = options.clock ?? (() => performance.now());
    // Bootstrap objects carry no uid: until the stored ones are read, responses have no flow control headers.
    this.configure([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS], [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS]);
  }

  /**
   * Applies the stored configuration. The mandatory objects are used from the bootstrap configuration while the
   * store lacks them (the ensurer puts them back). A FlowSchema whose priority level does not exist (dangling) is
   * skipped. Levels that remain keep their queues and running requests; a removed level's queued requests still
   * run as its seats free up.
   */
  configure(flowSchemas: readonly FlowSchema[], priorityLevels: readonly PriorityLevelConfiguration[]): void {
    const levelObjects = withMandatory(priorityLevels, MANDATORY_PRIORITY_LEVELS);
    const totalShares = levelObjects.reduce((sum, level) => sum + sharesOf(level), 0);
    const levels = new Map<string, Level>();
    for (const object of levelObjects) {
      const name = object.metadata.name!;
      const previous = this.levels.get(name);
      const settings = object.spec.type === 'Exempt' ? undefined : levelSettings(object, this.options.serverConcurrencyLimit, totalShares);
      let queues = previous?.queues;
      if (settings) {
        if (queues) queues.configure(settings);
        else queues = new LevelQueues(settings, this.estimatedServiceMs, this.clock);
      }
      levels.set(name, {
        object,
        ...(settings ? { queues } : {}),
        retryAfter: previous?.retryAfter ?? new RetryAfter(this.clock),
        exemptExecuting: previous?.exemptExecuting ?? 0,
      });
    }
    this.levels = levels;
    this.ordered = inMatchingOrder(withMandatory(flowSchemas, MANDATORY_FLOW_SCHEMAS).filter((fs) => levels.has(fs.spec.priorityLevelConfiguration.name)));
  }

  /** Whether a FlowSchema's priority level exists (false: it is dangling). */
  hasLevel(name: string): boolean {
    return this.levels.has(name);
  }

  async admit(request: FlowControlRequest): Promise<FlowControlResult> {
    // Stopping: nothing waits any more, and the API server answers 503 from now on.
    if (this.stopped) return undefined;
    if (request.isResourceRequest && LONG_RUNNING_SUBRESOURCES.has(request.subresource)) return undefined;
    // The catch-all schema matches every user; only its removal from both store and bootstrap could leave none.
    const match = classify(this.ordered, request);
    const flowSchema = match?.flowSchema;
    const level = this.levels.get(flowSchema?.spec.priorityLevelConfiguration.name ?? CATCH_ALL)!;
    if (flowSchema?.metadata.uid) request.responseHeaders[FLOW_SCHEMA_UID_HEADER] = flowSchema.metadata.uid;
    if (level.object.metadata.uid) request.responseHeaders[PRIORITY_LEVEL_UID_HEADER] = level.object.metadata.uid;

    const queues = level.queues;
    if (!queues) return this.exemptGrant(level);
    const seats = needsEstimate(request) ? await estimateSeats(request, maxSeatsOf(level.object, queues.limit)) : MIN_SEATS;
    try {
      return await queues.admit({
        flowHash: flowHash(flowSchema?.metadata.name ?? CATCH_ALL, match?.distinguisher ?? ''),
        seats,
        waitLimitMs: this.options.queueWaitLimitMs,
        signal: () => request.signal,
      });
    } catch (err) {
      if (!(err instanceof Rejection)) throw err;
      if (this.stopped) throw errors.unavailable('the API server is stopping');
      throw errors.tooManyRequests(rejectionMessage(level.object, err.reason, this.options.queueWaitLimitMs), level.retryAfter.rejected());
    }
  }

  /** Every level's limits, queues and counters. */
  states(): LevelState[] {
    return [...this.levels.values()]
      .map(({ object, queues, exemptExecuting }) => {
        const snapshot = queues?.snapshot() ?? { activeQueues: 0, waiting: 0, executing: exemptExecuting, seatsInUse: 0 };
        const counters = queues?.counters ?? { dispatched: 0, rejected: 0, timedOut: 0, cancelled: 0 };
        return { name: object.metadata.name!, exempt: !queues, concurrencyLimit: queues?.limit ?? 0, ...snapshot, ...counters };
      })
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Rejects every waiting request: the server is stopping. */
  stop(): void {
    this.stopped = true;
    for (const level of this.levels.values()) level.queues?.rejectAll();
  }

  private exemptGrant(level: Level): FlowControlGrant {
    level.exemptExecuting++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        level.exemptExecuting--;
      },
    };
  }
}

/** The objects, with the mandatory ones that are missing taken from the bootstrap configuration. */
function withMandatory<T extends FlowSchema | PriorityLevelConfiguration>(objects: readonly T[], mandatory: readonly T[]): T[] {
  const names = new Set(objects.map((object) => object.metadata.name));
  return [...objects, ...mandatory.filter((object) => !names.has(object.metadata.name))];
}

function sharesOf(level: PriorityLevelConfiguration): number {
  const shares = level.spec.type === 'Exempt' ? level.spec.exempt?.nominalConcurrencyShares : level.spec.limited?.nominalConcurrencyShares;
  return shares ?? (level.spec.type === 'Exempt' ? 0 : 30);
}

/**
 * A limited level's seats: the server's, shared by nominalConcurrencyShares among all levels (exempt ones count
 * with their own shares), rounded up — Kubernetes' nominal concurrency limit.
 */
function levelSettings(level: PriorityLevelConfiguration, serverLimit: number, totalShares: number): LevelSettings {
  const concurrencyLimit = totalShares > 0 ? Math.ceil((serverLimit * sharesOf(level)) / totalShares) : 0;
  const response = level.spec.limited?.limitResponse;
  const queuing = response?.type === 'Queue' ? response.queuing : undefined;
  if (!queuing) return { concurrencyLimit };
  return { concurrencyLimit, queuing: { queues: queuing.queues ?? 64, handSize: queuing.handSize ?? 8, queueLengthLimit: queuing.queueLengthLimit ?? 50 } };
}

/** Share of a level's seats one request may take (Kubernetes: 15 %, which keeps 10 at the default 600 seats). */
const MAX_SEATS_SHARE = 0.15;

/**
 * The most seats one request of a level may take: 15 % of its seats, and no more than its seats spread over a
 * flow's hand of queues — so wide lists leave room for narrow requests of other flows — one at least, ten at most.
 */
export function maxSeatsOf(level: PriorityLevelConfiguration, limit: number): number {
  const handSize = level.spec.limited?.limitResponse?.queuing?.handSize;
  const byShare = Math.ceil(limit * MAX_SEATS_SHARE);
  return Math.min(MAX_SEATS, Math.max(MIN_SEATS, handSize ? Math.min(byShare, Math.floor(limit / handSize)) : byShare));
}

function rejectionMessage(level: PriorityLevelConfiguration, reason: RejectReason, waitLimitMs: number): string {
  const name = level.metadata.name!;
  const queuing = level.spec.limited?.limitResponse?.queuing;
  const why = {
    'queue-full': `its queue for this flow holds queueLengthLimit ${queuing?.queueLengthLimit ?? 50} requests already`,
    'concurrency-limit': 'all its seats are taken and it rejects rather than queues (limitResponse type Reject)',
    'time-out': `the request waited in its queue for the limit of ${Math.round(waitLimitMs / 1000)} s`,
    cancelled: 'the client went away while the request waited',
  }[reason];
  return `Too many requests: priority level "${name}" is busy and ${why}; please try again later`;
}
