import { describe, expect, it } from 'vitest';
import { FanOut, type LiveSubscriber } from './fan-out.js';
import type { StoreEvent } from './types.js';

function event(revision: number, key = `/k/${revision}`): StoreEvent {
  return { type: 'ADDED', key, revision, object: { metadata: { name: key, resourceVersion: String(revision) } } };
}

class Recorder implements LiveSubscriber {
  readonly received: StoreEvent[] = [];
  endedWith: Error | undefined | 'not ended' = 'not ended';
  constructor(private readonly prefix = '/') {}
  wants(candidate: StoreEvent): boolean {
    return candidate.key.startsWith(this.prefix);
  }
  offer(received: StoreEvent): void {
    this.received.push(received);
  }
  end(error?: Error): void {
    this.endedWith = error;
  }
}

describe('FanOut', () => {
  it('publishes a committed event together with everything staged before it, in order', () => {
    const fanOut = new FanOut();
    const subscriber = new Recorder();
    fanOut.add(subscriber);
    const [one, two, three] = [event(1), event(2), event(3)];
    fanOut.stage(one!);
    fanOut.stage(two!);
    fanOut.stage(three!);
    fanOut.committed(two!);
    expect(subscriber.received.map((received) => received.revision)).toEqual([1, 2]);
    fanOut.committed(one!);
    fanOut.committed(three!);
    expect(subscriber.received.map((received) => received.revision)).toEqual([1, 2, 3]);
  });

  it('gives interested subscribers one frozen copy, and copies nothing when nobody is interested', () => {
    const fanOut = new FanOut();
    const pods = new Recorder('/pods/');
    const alsoPods = new Recorder('/pods/');
    fanOut.add(pods);
    fanOut.add(alsoPods);
    const original = event(1, '/pods/a');
    fanOut.stage(original);
    fanOut.committed(original);
    expect(pods.received[0]).toBe(alsoPods.received[0]);
    expect(pods.received[0]).not.toBe(original);
    expect(Object.isFrozen(pods.received[0]!.object.metadata)).toBe(true);
    expect(Object.isFrozen(original)).toBe(false);

    const other = event(2, '/nodes/n');
    fanOut.stage(other);
    fanOut.committed(other);
    expect(pods.received).toHaveLength(1);
  });

  it("on a failed commit, forgets only that commit's events and keeps every subscriber", () => {
    const fanOut = new FanOut();
    const subscriber = new Recorder();
    fanOut.add(subscriber);
    // A failed transaction staged revisions 5 and 6; the next one, staged before the failure was handled, reuses 5.
    const [lost, alsoLost, reused] = [event(5), event(6), event(5, '/k/reused')];
    fanOut.stage(lost);
    fanOut.stage(alsoLost);
    fanOut.stage(reused);
    fanOut.discard(lost);
    fanOut.discard(alsoLost);
    fanOut.committed(reused);
    expect(subscriber.received.map((e) => e.key)).toEqual(['/k/reused']);
    expect(subscriber.endedWith).toBe('not ended');
    fanOut.committed(lost);
    expect(subscriber.received).toHaveLength(1);
  });
});
