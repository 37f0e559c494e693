import { dealHand } from './shuffle-shard.js';

/** Why a request of a limited priority level did not get to run. */
export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

export class Rejection extends Error {
  constructor(readonly reason: RejectReason) {
    super(reason);
    this.name = 'Rejection';
  }
}

/** A running request's seats, given back once with release(). */
export interface Ticket {
  release(): void;
}

export interface QueuingSettings {
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

export interface LevelSettings {
  /** Seats the level may fill at once. */
  concurrencyLimit: number;
  /** Queues for requests that find the level full; without them such requests are rejected (limitResponse Reject). */
  queuing?: QueuingSettings;
}

export interface AdmitOptions {
  flowHash: bigint;
  seats: number;
  /** How long a request may wait in its queue. */
  waitLimitMs: number;
  /** Read only when the request has to wait: aborted when its client goes away. */
  signal?: () => AbortSignal | undefined;
}

/** Counters of a level since it was made, for the dump an administrator reads. */
export interface LevelCounters {
  dispatched: number;
  rejected: number;
  timedOut: number;
  cancelled: number;
}

/** Hands remembered per level before the memory is cleared. */
const MAX_HANDS = 10_000;

/** Weight of the latest duration in a queue's running estimate. */
const SERVICE_TIME_WEIGHT = 0.25;

class FairQueue {
  readonly waiting: Waiter[] = [];
  waitingSeats = 0;
  executingSeats = 0;
  executing = 0;
  /** Virtual time (seat-milliseconds) at which this queue's next request is due: what fair queuing orders by. */
  nextDispatchR = 0;
  /** Σ seats × start time and Σ estimated work of the executing requests: what they have cost so far, see overrun. */
  private seatStartSum = 0;
  private workSum = 0;

  /** What a request of this queue takes, by the ones that ended: a moving average, from the level's first guess. */
  constructor(public serviceMs: number) {}

  get active(): boolean {
    return this.waiting.length > 0 || this.executing > 0;
  }

  started(seats: number, work: number, at: number): void {
    this.executingSeats += seats;
    this.executing++;
    this.seatStartSum += seats * at;
    this.workSum += work;
  }

  ended(seats: number, work: number, startedAt: number, at: number): void {
    this.executingSeats -= seats;
    this.executing--;
    this.seatStartSum -= seats * startedAt;
    this.workSum -= work;
    // Charge the flow what the request really took rather than the estimate.
    this.nextDispatchR += seats * (at - startedAt) - work;
    this.serviceMs += SERVICE_TIME_WEIGHT * (at - startedAt - this.serviceMs);
  }

  /**
   * How far the executing requests have run past their estimates, in seat-milliseconds: charged as they run, so a
   * flow whose requests take far longer than estimated falls behind at once rather than when they end.
   */
  overrun(now: number): number {
    return this.executing === 0 ? 0 : Math.max(0, this.executingSeats * now - this.seatStartSum - this.workSum);
  }
}

interface Waiter {
  seats: number;
  /** Estimated work, seat-milliseconds. */
  work: number;
  /** Virtual time when it arrived. */
  arrivalR: number;
  queue: FairQueue;
  dispatch(): void;
  reject(reason: RejectReason): void;
}

/**
 * The queues and seats of one limited priority level: fair queuing of requests by virtual finish time, in the
 * manner of Kubernetes' queueset. Virtual time R advances as the seats would be shared among the active queues
 * (min(seats asked for, limit) ÷ active queues, per millisecond). A queue's next request is due at the queue's
 * nextDispatchR plus the request's work: its seats × what the queue's requests have been taking. The earliest due
 * runs first and moves its queue's nextDispatchR on by that work; time a running request takes past its estimate
 * is charged while it runs, and settled with its real duration when it ends. A flow is dealt a hand of queues by
 * shuffle sharding and joins the shortest of them; a full queue, a request waiting longer than its limit, or a
 * client gone away is a rejection.
 */
export class LevelQueues {
  private settings: LevelSettings;
  private queues: FairQueue[] = [];
  /** The hands dealt lately, by flow hash, for the current queues: a flow sends many requests. */
  private readonly hands = new Map<bigint, number[]>();
  /** Queues with requests waiting or executing, old queues of an earlier setting included until they drain. */
  private readonly active = new Set<FairQueue>();
  private seatsInUse = 0;
  private executing = 0;
  private waiting = 0;
  /** Seats asked for by active queues: waiting plus executing. */
  private seatsRequested = 0;
  private virtualTime = 0;
  private lastSync: number;
  readonly counters: LevelCounters = { dispatched: 0, rejected: 0, timedOut: 0, cancelled: 0 };

  constructor(
    settings: LevelSettings,
    private readonly estimatedServiceMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.settings = settings;
    this.queues = this.makeQueues(settings.queuing);
    this.lastSync = clock();
  }

  get limit(): number {
    return this.settings.concurrencyLimit;
  }

  /** New limits: queued requests stay where they are (old queues drain); new ones use the new queues. */
  configure(settings: LevelSettings): void {
    this.syncTime();
    const queueCount = settings.queuing?.queues ?? 0;
    if (queueCount !== this.queues.length || settings.queuing?.handSize !== this.settings.queuing?.handSize) {
      this.queues = this.makeQueues(settings.queuing);
      this.hands.clear();
    }
    this.settings = settings;
    this.dispatchWhatFits();
  }

  /** Runs the request now, queues it until seats free up, or rejects it (throws a Rejection). */
  admit(options: AdmitOptions): Ticket | Promise<Ticket> {
    this.syncTime();
    const { seats } = options;
    const queuing = this.settings.queuing;
    if (!queuing) {
      if (!this.fits(seats)) {
        this.counters.rejected++;
        throw new Rejection('concurrency-limit');
      }
      this.counters.dispatched++;
      return this.start(seats, seats * this.estimatedServiceMs, undefined);
    }
    const queue = this.chooseQueue(options.flowHash, queuing);
    if (queue.waiting.length >= queuing.queueLengthLimit) {
      this.counters.rejected++;
      throw new Rejection('queue-full');
    }
    let outcome: Ticket | RejectReason | undefined;
    let settle: ((outcome: Ticket | RejectReason) => void) | undefined;
    // Each queue learns what its requests take (lists of thousands of objects, or quick reads), so the order
    // among queued requests follows what they will really cost.
    const work = seats * queue.serviceMs;
    const waiter: Waiter = {
      seats,
      work,
      arrivalR: this.virtualTime,
      queue,
      dispatch: () => {
        const ticket = this.start(seats, work, queue);
        if (settle) settle(ticket);
        else outcome = ticket;
      },
      reject: (reason) => {
        if (settle) settle(reason);
        else outcome = reason;
      },
    };
    this.enqueue(waiter);
    this.dispatchWhatFits();
    if (outcome !== undefined) return typeof outcome === 'string' ? Promise.reject(new Rejection(outcome)) : outcome;
    return this.wait(waiter, options, (resolve) => (settle = resolve));
  }

  /** What an administrator sees of the level. */
  snapshot(): { activeQueues: number; waiting: number; executing: number; seatsInUse: number } {
    return { activeQueues: this.active.size, waiting: this.waiting, executing: this.executing, seatsInUse: this.seatsInUse };
  }

  /** Rejects every waiting request (the server is stopping). */
  rejectAll(): void {
    for (const queue of [...this.active]) for (const waiter of [...queue.waiting]) this.remove(waiter, 'cancelled');
  }

  private wait(waiter: Waiter, options: AdmitOptions, onSettle: (settle: (outcome: Ticket | RejectReason) => void) => void): Promise<Ticket> {
    return new Promise<Ticket>((resolve, reject) => {
      const signal = options.signal?.();
      const onAbort = () => this.remove(waiter, 'cancelled');
      const timer = setTimeout(() => this.remove(waiter, 'time-out'), options.waitLimitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      onSettle((outcome) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (typeof outcome === 'string') reject(new Rejection(outcome));
        else resolve(outcome);
      });
      if (signal?.aborted) onAbort();
    });
  }

  private fits(seats: number): boolean {
    // A request wider than the whole level still runs, alone: otherwise it could never run at all.
    return this.seatsInUse === 0 || this.seatsInUse + seats <= this.settings.concurrencyLimit;
  }

  /** The queue of the flow's hand with the fewest seats waiting and executing. */
  private chooseQueue(hash: bigint, queuing: QueuingSettings): FairQueue {
    let best: FairQueue | undefined;
    let hand = this.hands.get(hash);
    if (!hand) {
      hand = dealHand(hash, this.queues.length, queuing.handSize);
      if (this.hands.size >= MAX_HANDS) this.hands.clear();
      this.hands.set(hash, hand);
    }
    for (const index of hand) {
      const queue = this.queues[index]!;
      if (!best || queue.waitingSeats + queue.executingSeats < best.waitingSeats + best.executingSeats) best = queue;
    }
    return best!;
  }

  private enqueue(waiter: Waiter): void {
    const { queue } = waiter;
    if (!queue.active) {
      // A queue that was idle starts from now: it gets no credit for the time it asked for nothing.
      queue.nextDispatchR = Math.max(queue.nextDispatchR, this.virtualTime);
      this.active.add(queue);
    }
    queue.waiting.push(waiter);
    queue.waitingSeats += waiter.seats;
    this.seatsRequested += waiter.seats;
    this.waiting++;
  }

  private remove(waiter: Waiter, reason: 'time-out' | 'cancelled'): void {
    const { queue } = waiter;
    const index = queue.waiting.indexOf(waiter);
    if (index < 0) return;
    this.syncTime();
    queue.waiting.splice(index, 1);
    queue.waitingSeats -= waiter.seats;
    this.seatsRequested -= waiter.seats;
    this.waiting--;
    if (!queue.active) this.active.delete(queue);
    if (reason === 'time-out') this.counters.timedOut++;
    else this.counters.cancelled++;
    waiter.reject(reason);
    // The head of a queue may have been what held the others back.
    this.dispatchWhatFits();
  }

  /** Starts the due requests while they fit; the earliest due that does not fit waits, and so do the rest. */
  private dispatchWhatFits(): void {
    const now = this.clock();
    for (;;) {
      let due: FairQueue | undefined;
      let dueAt = Infinity;
      for (const queue of this.active) {
        const head = queue.waiting[0];
        if (!head) continue;
        // A queue that could not use its share falls behind R; its head still never starts before it arrived.
        const at = Math.max(queue.nextDispatchR + queue.overrun(now), head.arrivalR) + head.work;
        if (at < dueAt) {
          due = queue;
          dueAt = at;
        }
      }
      if (!due) return;
      const head = due.waiting[0]!;
      if (!this.fits(head.seats)) return;
      due.waiting.shift();
      due.waitingSeats -= head.seats;
      this.seatsRequested -= head.seats;
      this.waiting--;
      due.nextDispatchR = Math.max(due.nextDispatchR, head.arrivalR) + head.work;
      this.counters.dispatched++;
      head.dispatch();
    }
  }

  private start(seats: number, work: number, queue: FairQueue | undefined): Ticket {
    const startedAt = this.clock();
    this.seatsInUse += seats;
    this.executing++;
    if (queue) {
      queue.started(seats, work, startedAt);
      this.seatsRequested += seats;
      this.active.add(queue);
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.syncTime();
        this.seatsInUse -= seats;
        this.executing--;
        if (queue) {
          queue.ended(seats, work, startedAt, this.clock());
          this.seatsRequested -= seats;
          if (!queue.active) this.active.delete(queue);
        }
        this.dispatchWhatFits();
      },
    };
  }

  private makeQueues(queuing: QueuingSettings | undefined): FairQueue[] {
    return Array.from({ length: queuing?.queues ?? 0 }, () => new FairQueue(this.estimatedServiceMs));
  }

  private syncTime(): void {
    const now = this.clock();
    const elapsed = now - this.lastSync;
    this.lastSync = now;
    if (this.active.size > 0 && elapsed > 0) this.virtualTime += (elapsed * Math.min(this.seatsRequested, this.settings.concurrencyLimit)) / this.active.size;
  }
}
