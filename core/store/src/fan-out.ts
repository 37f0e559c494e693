import { cloneJsonValue, deepFreeze } from '@skiff/api';
import type { StoreEvent } from './types.js';

/** A live watcher as the fan-out sees it: it never blocks, it only takes or declines an event. */
export interface LiveSubscriber {
  wants(event: StoreEvent): boolean;
  offer(event: StoreEvent): void;
  end(error?: unknown): void;
}

/**
 * Hands committed events to live watchers in revision order. A write stages its event inside its
 * transaction (so staging order is revision order) and marks it committed once its commit promise
 * resolves; commits land in order, so everything staged before a committed event is committed too.
 */
export class FanOut {
  private readonly subscribers = new Set<LiveSubscriber>();
  private staged: StoreEvent[] = [];

  add(subscriber: LiveSubscriber): void {
    this.subscribers.add(subscriber);
  }

  remove(subscriber: LiveSubscriber): void {
    this.subscribers.delete(subscriber);
  }

  /** Whether any watcher listens (with none, events need not be read at all). */
  get listened(): boolean {
    return this.subscribers.size > 0;
  }

  stage(event: StoreEvent): void {
    this.staged.push(event);
  }

  /** Publishes `event` and every event staged before it (unless an earlier commit already did). */
  committed(event: StoreEvent): void {
    const position = this.staged.indexOf(event);
    if (position < 0) return;
    for (const ready of this.staged.splice(0, position + 1)) this.publish(ready);
  }

  /**
   * The commit of `event` failed: it never happened, and its revision goes to the next write. Watchers saw
   * nothing of it (only committed events are published), so they go on. The rejection of a failed commit
   * arrives before any later transaction commits, so a later `committed` never publishes a discarded event.
   */
  discard(event: StoreEvent): void {
    const position = this.staged.indexOf(event);
    if (position >= 0) this.staged.splice(position, 1);
  }

  endAll(error?: Error): void {
    for (const subscriber of this.subscribers) subscriber.end(error);
    this.subscribers.clear();
  }

  /** Hands `event` to every interested watcher now (the caller keeps revision order: a store spread over threads). */
  publish(event: StoreEvent): void {
    // One frozen copy shared by every interested watcher: the writer keeps its own object, and a
    // watcher that mutates an event fails loudly instead of corrupting what the others see.
    let shared: StoreEvent | undefined;
    for (const subscriber of this.subscribers) {
      if (!subscriber.wants(event)) continue;
      shared ??= deepFreeze(cloneJsonValue(event));
      subscriber.offer(shared);
    }
  }
}
