import { describe, expect, it } from 'vitest';
import { Watcher, type LogReader } from './watcher.js';
import type { LiveSubscriber } from './fan-out.js';
import type { StoreEvent } from './types.js';

function event(revision: number): StoreEvent {
  return { type: 'ADDED', key: `/k/${revision}`, revision, object: { metadata: { name: `k${revision}` } } };
}

class Subscribers {
  readonly current = new Set<LiveSubscriber>();
  add(subscriber: LiveSubscriber): void {
    this.current.add(subscriber);
  }
  remove(subscriber: LiveSubscriber): void {
    this.current.delete(subscriber);
  }
}

const emptyLog: LogReader = (_prefix, afterRevision) => ({ events: [], scannedThrough: afterRevision, reachedEnd: true });

function watcher(signal: AbortSignal, fanOut = new Subscribers(), readLog = emptyLog) {
  return { fanOut, watcher: new Watcher({ prefix: '/k/', fromRevision: 0, signal, bufferSize: 10, readLog, fanOut }) };
}

describe('Watcher', () => {
  it('joins the fan-out when created and leaves it when its signal is already aborted', async () => {
    const { fanOut, watcher: aborted } = watcher(AbortSignal.abort());
    expect(fanOut.current.size).toBe(0);
    expect(await aborted.next()).toEqual({ value: undefined, done: true });

    const controller = new AbortController();
    const { fanOut: live } = watcher(controller.signal);
    expect(live.current.size).toBe(1);
    controller.abort();
    expect(live.current.size).toBe(0);
  });

  it('leaves the fan-out on return()', async () => {
    const { fanOut, watcher: subject } = watcher(new AbortController().signal);
    await subject.return();
    expect(fanOut.current.size).toBe(0);
    expect(await subject.next()).toEqual({ value: undefined, done: true });
  });

  it('gives overlapping next() calls one event each, in order', async () => {
    const { watcher: subject } = watcher(new AbortController().signal);
    const first = subject.next();
    const second = subject.next();
    for (const revision of [1, 2]) {
      const offered = event(revision);
      if (subject.wants(offered)) subject.offer(offered);
    }
    expect([(await first).value?.revision, (await second).value?.revision]).toEqual([1, 2]);
  });

  it('throws an ending error once, then reports done', async () => {
    const { watcher: subject } = watcher(new AbortController().signal);
    const failure = new Error('store closed');
    subject.end(failure);
    await expect(subject.next()).rejects.toBe(failure);
    expect(await subject.next()).toEqual({ value: undefined, done: true });
  });
});
