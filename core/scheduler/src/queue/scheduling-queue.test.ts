import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '@skiff/api';
import { makePod } from '../test-support/objects.js';
import { SchedulingQueue } from './scheduling-queue.js';

const queues: SchedulingQueue[] = [];
function queue(options: ConstructorParameters<typeof SchedulingQueue>[0] = {}): SchedulingQueue {
  const q = new SchedulingQueue({ backoffInitialMs: 20, backoffMaxMs: 80, ...options });
  queues.push(q);
  return q;
}
afterEach(() => {
  for (const q of queues.splice(0)) q.close();
});

const created = (name: string, at: string): Pod => {
  const pod = makePod(name);
  pod.metadata.creationTimestamp = at;
  return pod;
};

/** Pops with a deadline: undefined when nothing came in time. */
const popWithin = (q: SchedulingQueue, ms: number) => q.pop(AbortSignal.timeout(ms));

describe('SchedulingQueue', () => {
  it('pops the oldest pod first, FIFO among equals', async () => {
    const q = queue();
    q.add('default/late', created('late', '2026-01-01T00:00:05Z'));
    q.add('default/early', created('early', '2026-01-01T00:00:01Z'));
    q.add('default/early-2', created('early-2', '2026-01-01T00:00:01Z'));
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await q.pop())!.info.key);
    expect(order).toEqual(['default/early', 'default/early-2', 'default/late']);
  });

  it('orders by a queueSort comparator when the profile has one', async () => {
    const q = queue({ compare: (a, b) => (b.spec.priority ?? 0) - (a.spec.priority ?? 0) });
    q.add('default/low', makePod('low', undefined, { priority: 1 }));
    q.add('default/high', makePod('high', undefined, { priority: 100 }));
    expect((await q.pop())!.info.key).toBe('default/high');
  });

  it('holds a pop until a pod arrives, and keeps one copy per pod', async () => {
    const q = queue();
    const waiting = q.pop();
    q.add('default/a', makePod('a'));
    q.add('default/a', makePod('a'));
    const popped = await waiting;
    expect(popped!.info).toMatchObject({ key: 'default/a', attempts: 1 });
    expect(q.pending).toBe(0);
    expect(await popWithin(q, 30)).toBeUndefined();
  });

  it('parks an unschedulable pod until the cluster changes, then retries after its backoff', async () => {
    const q = queue();
    q.add('default/a', makePod('a'));
    const first = (await q.pop())!;
    q.requeueUnschedulable('default/a', first.cycle);
    expect(await popWithin(q, 60)).toBeUndefined();
    q.moveAllToActive();
    const again = await popWithin(q, 1000);
    expect(again?.info).toMatchObject({ key: 'default/a', attempts: 2 });
  });

  it('only backs off a pod whose scheduling failed with an error: no cluster change needed', async () => {
    const q = queue();
    q.add('default/a', makePod('a'));
    const first = (await q.pop())!;
    q.requeueAfterError('default/a');
    expect(await popWithin(q, 10)).toBeUndefined();
    const again = await popWithin(q, 1000);
    expect(again?.info).toMatchObject({ key: 'default/a', attempts: 2 });
    expect(again!.cycle).toBeGreaterThan(first.cycle);
  });

  it('retries at once when the cluster changed while the pod was being scheduled', async () => {
    const q = queue();
    q.add('default/a', makePod('a'));
    const first = (await q.pop())!;
    q.moveAllToActive();
    q.requeueUnschedulable('default/a', first.cycle);
    expect((await popWithin(q, 1000))?.info.key).toBe('default/a');
  });

  it('leaves a parked pod parked on a status-only update, but retries it when its spec changes', async () => {
    const q = queue({ backoffInitialMs: 0 });
    q.add('default/a', makePod('a'));
    q.requeueUnschedulable('default/a', (await q.pop())!.cycle);
    q.add('default/a', makePod('a'), false);
    expect(await popWithin(q, 40)).toBeUndefined();
    q.add('default/a', makePod('a', { cpu: '1' }), true);
    expect((await popWithin(q, 1000))?.info.pod.spec.containers[0]!.resources).toEqual({ requests: { cpu: '1' } });
  });

  it('forgets deleted pods and bound ones', async () => {
    const q = queue();
    q.add('default/a', makePod('a'));
    q.add('default/b', makePod('b'));
    q.delete('default/a');
    const popped = (await q.pop())!;
    expect(popped.info.key).toBe('default/b');
    q.done('default/b');
    expect(q.has('default/b')).toBe(false);
    expect(await popWithin(q, 30)).toBeUndefined();
  });

  it('retries long-parked pods even when nothing changes', async () => {
    const q = queue({ backoffInitialMs: 0, unschedulableRetryMs: 50 });
    q.add('default/a', makePod('a'));
    q.requeueUnschedulable('default/a', (await q.pop())!.cycle);
    expect((await popWithin(q, 2000))?.info.key).toBe('default/a');
  });

  it('resolves waiting pops with undefined when closed', async () => {
    const q = queue();
    const waiting = q.pop();
    q.close();
    expect(await waiting).toBeUndefined();
  });
});

describe('pods released together', () => {
  it('are all queued before the next pop, so the sort decides among them', async () => {
    const byPriority = (a: Pod, b: Pod) => (b.spec.priority ?? 0) - (a.spec.priority ?? 0);
    const queue = new SchedulingQueue({ compare: byPriority, backoffInitialMs: 0 });
    queue.add('default/low', { ...makePod('low'), spec: { ...makePod('low').spec, priority: 1 } });
    queue.add('default/high', { ...makePod('high'), spec: { ...makePod('high').spec, priority: 100 } });
    const low = (await queue.pop())!;
    const high = (await queue.pop())!;
    queue.requeueUnschedulable(low.info.key, low.cycle);
    queue.requeueUnschedulable(high.info.key, high.cycle);
    const waiting = queue.pop();
    queue.moveAllToActive();
    expect((await waiting)!.info.key).toBe('default/high');
    queue.close();
  });
});
