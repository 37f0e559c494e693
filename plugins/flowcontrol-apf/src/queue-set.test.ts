import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LevelQueues, Rejection, type AdmitOptions, type LevelSettings, type Ticket } from './queue-set.js';

// With handSize 1 a flow's hash modulo the number of queues is its queue: flows 0n, 1n, 2n get queues 0, 1, 2.
const queued = (concurrencyLimit: number, queueLengthLimit = 50): LevelSettings => ({
  concurrencyLimit,
  queuing: { queues: 8, handSize: 1, queueLengthLimit },
});
const ESTIMATE_MS = 10;

let now = 0;
const clock = () => now;

/** Admits a request and records, in `order`, when it starts. */
function request(level: LevelQueues, name: string, order: string[], options: Partial<AdmitOptions> & { flowHash: bigint }) {
  const admitted = Promise.resolve(level.admit({ seats: 1, waitLimitMs: 60_000, ...options })).then((ticket) => {
    order.push(name);
    return ticket;
  });
  return admitted;
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => {
  now = 0;
});

describe('fair queuing', () => {
  it('lets a new flow go before the backlog of a busy one', async () => {
    const level = new LevelQueues(queued(1), ESTIMATE_MS, clock);
    const order: string[] = [];
    const a1 = request(level, 'a1', order, { flowHash: 0n });
    const waiting = ['a2', 'a3', 'a4'].map((name) => request(level, name, order, { flowHash: 0n }));
    const b1 = request(level, 'b1', order, { flowHash: 1n });
    await settled();
    expect(order).toEqual(['a1']);

    now = 10;
    (await a1).release();
    await settled();
    expect(order).toEqual(['a1', 'b1']);

    for (const next of [b1, ...waiting]) {
      now += 10;
      (await next).release();
      await settled();
    }
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('alternates between two flows that keep the level full', async () => {
    const level = new LevelQueues(queued(1), ESTIMATE_MS, clock);
    const order: string[] = [];
    const tickets = [
      request(level, 'a1', order, { flowHash: 0n }),
      request(level, 'a2', order, { flowHash: 0n }),
      request(level, 'a3', order, { flowHash: 0n }),
      request(level, 'b1', order, { flowHash: 1n }),
      request(level, 'b2', order, { flowHash: 1n }),
      request(level, 'b3', order, { flowHash: 1n }),
    ];
    for (let started = 1; started <= 6; started++) {
      await settled();
      now += ESTIMATE_MS;
      const running = tickets[['a1', 'a2', 'a3', 'b1', 'b2', 'b3'].indexOf(order.at(-1)!)]!;
      (await running).release();
    }
    expect(order).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
  });

  it('charges a flow the time its requests really took, not the estimate', async () => {
    const level = new LevelQueues(queued(1), ESTIMATE_MS, clock);
    const order: string[] = [];
    const slow = request(level, 'a1', order, { flowHash: 0n });
    now = 50;
    request(level, 'a2', order, { flowHash: 0n });
    request(level, 'b1', order, { flowHash: 1n });
    now = 100;
    (await slow).release();
    await settled();
    // Estimated, a2 (due at 20) would beat b1 (due at 60); a1 took ten times its estimate.
    expect(order).toEqual(['a1', 'b1']);
  });

  it("orders a queue's requests by what its earlier requests took", async () => {
    const level = new LevelQueues(queued(1), ESTIMATE_MS, clock);
    const order: string[] = [];
    const slow = request(level, 'a1', order, { flowHash: 0n });
    now = 100;
    (await slow).release();
    const other = request(level, 'c1', order, { flowHash: 2n });
    request(level, 'a2', order, { flowHash: 0n });
    now = 105;
    request(level, 'b1', order, { flowHash: 1n });
    now = 110;
    (await other).release();
    await settled();
    // a1 took 100 ms: a2 is expected to take longer than b1, which came 5 ms later.
    expect(order).toEqual(['a1', 'c1', 'b1']);
  });

  it('charges a flow for a request still running past its estimate', async () => {
    const level = new LevelQueues(queued(2), ESTIMATE_MS, clock);
    const order: string[] = [];
    request(level, 'a1', order, { flowHash: 0n });
    const other = request(level, 'c1', order, { flowHash: 2n });
    request(level, 'a2', order, { flowHash: 0n });
    now = 400;
    request(level, 'b1', order, { flowHash: 1n });
    now = 500;
    (await other).release();
    await settled();
    // a1 has run 490 ms past its estimate: a2 is due after b1, which came later.
    expect(order).toEqual(['a1', 'c1', 'b1']);
  });

  it('weighs requests by their seats: a wide request counts as much as that many narrow ones', async () => {
    const level = new LevelQueues(queued(10), ESTIMATE_MS, clock);
    const order: string[] = [];
    const blocker = request(level, 'blocker', order, { flowHash: 2n, seats: 10 });
    request(level, 'wide1', order, { flowHash: 0n, seats: 5 });
    request(level, 'wide2', order, { flowHash: 0n, seats: 5 });
    for (let i = 1; i <= 6; i++) request(level, `narrow${i}`, order, { flowHash: 1n, seats: 1 });
    await settled();
    now = 10;
    (await blocker).release();
    await settled();
    // Ten seats free: wide1 (due at 50) and narrow1..5 (due at 10..50) fit; wide2 is due after them.
    expect(order.slice(1).sort()).toEqual(['narrow1', 'narrow2', 'narrow3', 'narrow4', 'narrow5', 'wide1']);
  });
});

describe('seats', () => {
  it('runs a request wider than the level alone, and holds the others until it ends', async () => {
    const level = new LevelQueues(queued(4), ESTIMATE_MS, clock);
    const order: string[] = [];
    const wide = request(level, 'wide', order, { flowHash: 0n, seats: 10 });
    request(level, 'narrow', order, { flowHash: 1n });
    await settled();
    expect(order).toEqual(['wide']);
    expect(level.snapshot()).toEqual({ activeQueues: 2, waiting: 1, executing: 1, seatsInUse: 10 });
    (await wide).release();
    await settled();
    expect(order).toEqual(['wide', 'narrow']);
    expect(level.snapshot()).toMatchObject({ waiting: 0, executing: 1, seatsInUse: 1 });
  });

  it('gives seats back once, however often release is called', async () => {
    const level = new LevelQueues(queued(2), ESTIMATE_MS, clock);
    const first = (await level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 1000 })) as Ticket;
    await level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 1000 });
    first.release();
    first.release();
    expect(level.snapshot()).toMatchObject({ executing: 1, seatsInUse: 1 });
  });
});

describe('rejections', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const reasonOf = async (admitted: Ticket | Promise<Ticket>) => {
    try {
      await admitted;
      return 'admitted';
    } catch (err) {
      return err instanceof Rejection ? err.reason : String(err);
    }
  };

  it('rejects a request whose queue already holds queueLengthLimit requests', async () => {
    const level = new LevelQueues(queued(1, 2), ESTIMATE_MS, clock);
    await level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 1000 });
    const waiting = [level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 1000 }), level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 1000 })];
    expect(() => level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 1000 })).toThrow(new Rejection('queue-full'));
    // Another flow has a queue of its own.
    const other = level.admit({ flowHash: 1n, seats: 1, waitLimitMs: 1000 });
    expect(level.counters).toMatchObject({ dispatched: 1, rejected: 1 });
    vi.advanceTimersByTime(1000);
    expect(await Promise.all([...waiting, other].map(reasonOf))).toEqual(['time-out', 'time-out', 'time-out']);
  });

  it('rejects a request that waited its limit, and one whose client went away', async () => {
    const level = new LevelQueues(queued(1), ESTIMATE_MS, clock);
    const running = (await level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 1000 })) as Ticket;
    const timingOut = level.admit({ flowHash: 1n, seats: 1, waitLimitMs: 500 });
    const client = new AbortController();
    const leaving = level.admit({ flowHash: 2n, seats: 1, waitLimitMs: 5000, signal: () => client.signal });
    const staying = level.admit({ flowHash: 3n, seats: 1, waitLimitMs: 5000 });
    client.abort();
    vi.advanceTimersByTime(500);
    expect(await reasonOf(timingOut)).toBe('time-out');
    expect(await reasonOf(leaving)).toBe('cancelled');
    running.release();
    expect(await reasonOf(staying)).toBe('admitted');
    expect(level.counters).toEqual({ dispatched: 2, rejected: 0, timedOut: 1, cancelled: 1 });
  });

  it('rejects at once when the level is full and does not queue (limitResponse Reject)', async () => {
    const level = new LevelQueues({ concurrencyLimit: 2 }, ESTIMATE_MS, clock);
    const first = (await level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 1000 })) as Ticket;
    await level.admit({ flowHash: 1n, seats: 1, waitLimitMs: 1000 });
    expect(() => level.admit({ flowHash: 2n, seats: 1, waitLimitMs: 1000 })).toThrow(new Rejection('concurrency-limit'));
    first.release();
    expect(await reasonOf(level.admit({ flowHash: 2n, seats: 1, waitLimitMs: 1000 }))).toBe('admitted');
  });

  it('keeps queued requests through a change of queues, and runs them as seats free up', async () => {
    const level = new LevelQueues(queued(1), ESTIMATE_MS, clock);
    const running = (await level.admit({ flowHash: 0n, seats: 1, waitLimitMs: 5000 })) as Ticket;
    const queuedBefore = level.admit({ flowHash: 1n, seats: 1, waitLimitMs: 5000 });
    level.configure({ concurrencyLimit: 1, queuing: { queues: 2, handSize: 1, queueLengthLimit: 5 } });
    const queuedAfter = level.admit({ flowHash: 1n, seats: 1, waitLimitMs: 5000 });
    expect(level.snapshot()).toMatchObject({ activeQueues: 3, waiting: 2 });
    running.release();
    (await queuedBefore).release();
    expect(await reasonOf(queuedAfter)).toBe('admitted');
  });
});
