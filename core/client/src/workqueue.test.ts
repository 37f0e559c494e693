import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from '@skiff/kernel';
import { recordingLogger } from '@skiff/kernel';
import { objectKey, runWorkers, splitObjectKey, WorkQueue } from './workqueue.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('hands items out in order and keeps one copy of an item that waits', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
    expect(queue.len()).toBe(0);
  });

  it('re-queues an item added while it is processed only after done(), so no two workers share it', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    const item = await queue.get();
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(0);

    let secondGet: string | undefined;
    void queue.get().then((next) => (secondGet = next));
    await Promise.resolve();
    expect(secondGet).toBeUndefined();

    queue.done(item as string);
    expect(await waitFor('the re-queued item', () => secondGet)).toBe('a');
  });

  it('wakes a waiting get() when an item arrives', async () => {
    const queue = new WorkQueue<number>();
    const pending = queue.get();
    queue.add(7);
    expect(await pending).toBe(7);
  });

  it('adds delayed items when their time comes, keeping the earliest of two delays', async () => {
    vi.useFakeTimers();
    const queue = new WorkQueue();
    queue.addAfter('late', 1_000);
    queue.addAfter('late', 100);
    queue.addAfter('late', 5_000);
    queue.addAfter('now', 0);
    expect(queue.len()).toBe(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(queue.len()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(queue.len()).toBe(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(queue.len()).toBe(2);
  });

  it('backs off per item exponentially up to the cap, and forget() resets it', async () => {
    vi.useFakeTimers();
    const queue = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 50 });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = Date.now();
      queue.addRateLimited('x');
      while (queue.len() === 0) await vi.advanceTimersByTimeAsync(1);
      delays.push(Date.now() - start);
      queue.done((await queue.get()) as string);
    }
    expect(delays).toEqual([10, 20, 40, 50, 50]);
    expect(queue.numRequeues('x')).toBe(5);
    expect(queue.numRequeues('other')).toBe(0);
    queue.forget('x');
    expect(queue.numRequeues('x')).toBe(0);
  });

  it('drains after shutDown, then answers undefined; later adds and pending delays are dropped', async () => {
    vi.useFakeTimers();
    const queue = new WorkQueue();
    queue.add('a');
    queue.addAfter('b', 100);
    queue.shutDown();
    queue.add('c');
    await vi.advanceTimersByTimeAsync(200);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBeUndefined();
  });

  it('releases every waiting get() on shutDown', async () => {
    const queue = new WorkQueue();
    const waiting = [queue.get(), queue.get()];
    queue.shutDown();
    expect(await Promise.all(waiting)).toEqual([undefined, undefined]);
  });
});

describe('runWorkers', () => {
  it('processes items with several workers, never one item twice at once, and stops on abort', async () => {
    const queue = new WorkQueue();
    const controller = new AbortController();
    const active = new Set<string>();
    const handled: string[] = [];
    let overlapped = false;
    const running = runWorkers(
      queue,
      3,
      async (item) => {
        if (active.has(item)) overlapped = true;
        active.add(item);
        await new Promise((resolve) => setTimeout(resolve, 2));
        active.delete(item);
        handled.push(item);
      },
      { logger: recordingLogger(), signal: controller.signal },
    );
    for (let round = 0; round < 5; round++) for (const item of ['a', 'b', 'c', 'd']) queue.add(item);
    await waitFor('all items handled', () => ['a', 'b', 'c', 'd'].every((item) => handled.includes(item)) && queue.len() === 0);
    controller.abort();
    await running;
    expect(overlapped).toBe(false);
  });

  it('retries a failing item with backoff, logs each failure, and drops it after maxRetries', async () => {
    const queue = new WorkQueue({ baseDelayMs: 1, maxDelayMs: 4 });
    const logger = recordingLogger();
    const controller = new AbortController();
    let attempts = 0;
    const running = runWorkers(
      queue,
      1,
      async () => {
        attempts += 1;
        throw new Error('boom');
      },
      { logger, signal: controller.signal, maxRetries: 3 },
    );
    queue.add('bad');
    await waitFor('the item to be dropped', () => logger.records.some((r) => r.level === 'error'));
    expect(attempts).toBe(4);
    expect(logger.records.filter((r) => r.level === 'warn')).toHaveLength(3);
    expect(logger.records.at(-1)?.fields).toMatchObject({ item: 'bad', retries: 3 });
    expect(queue.numRequeues('bad')).toBe(0);
    controller.abort();
    await running;
  });

  it('forgets the backoff of an item once it succeeds', async () => {
    const queue = new WorkQueue({ baseDelayMs: 1 });
    const controller = new AbortController();
    let attempts = 0;
    const running = runWorkers(
      queue,
      1,
      async () => {
        attempts += 1;
        if (attempts < 3) throw new Error('not yet');
      },
      { logger: recordingLogger(), signal: controller.signal },
    );
    queue.add('x');
    await waitFor('the third attempt', () => attempts === 3);
    await waitFor('the backoff to be forgotten', () => queue.numRequeues('x') === 0);
    controller.abort();
    await running;
  });

  it('returns at once when the signal is already aborted', async () => {
    const queue = new WorkQueue();
    await runWorkers(queue, 2, async () => undefined, { logger: recordingLogger(), signal: AbortSignal.abort() });
    queue.add('ignored');
    expect(queue.len()).toBe(0);
  });
});

describe('object keys', () => {
  it('joins namespace and name, and splits them back', () => {
    expect(objectKey({ metadata: { namespace: 'default', name: 'web' } })).toBe('default/web');
    expect(objectKey({ metadata: { name: 'node-1' } })).toBe('node-1');
    expect(splitObjectKey('default/web')).toEqual({ namespace: 'default', name: 'web' });
    expect(splitObjectKey('node-1')).toEqual({ name: 'node-1' });
  });
});
