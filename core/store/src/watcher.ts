import type { FanOut, LiveSubscriber } from './fan-out.js';
import type { LogChunk } from './event-log.js';
import type { StoreEvent } from './types.js';

/** Where a watcher reads history: one chunk of the event log from a fresh snapshot, or a Compacted error. */
export type LogReader = (prefix: string, afterRevision: number) => LogChunk;

export interface WatcherOptions {
  prefix: string;
  fromRevision: number;
  signal: AbortSignal;
  bufferSize: number;
  readLog: LogReader;
  /** The live events: the watcher joins at once and leaves when it ends (aborted, returned, or ended by the store). */
  fanOut: Pick<FanOut, 'add' | 'remove'>;
}

/**
 * One watch: events for keys under `prefix` after `fromRevision`, in revision order, with no gap and
 * no duplicate.
 *
 * It is subscribed to the live fan-out from the moment it is created, and reads history from the
 * event log in chunks. Because buffering starts before each log snapshot is taken, every event
 * committed after that snapshot is in the live buffer; events the log already supplied are
 * dropped from the buffer by revision. When a slow consumer lets the buffer fill up, the watcher
 * stops buffering (writers never wait) and goes back to reading the log from where it is; only if
 * the log has been compacted past that point does the watch end with a Compacted error.
 */
export class Watcher implements AsyncIterableIterator<StoreEvent>, LiveSubscriber {
  readonly prefix: string;
  /** Every event up to this revision has been queued for delivery or did not match. */
  private readThrough: number;
  /** Events read from the log, waiting to be delivered. */
  private history: StoreEvent[] = [];
  /** Live events from the fan-out, waiting to be delivered. */
  private live: StoreEvent[] = [];
  private buffering = true;
  private catchingUp = true;
  private ending: { error?: unknown } | undefined;
  private errorReported = false;
  private wakeUp: (() => void) | undefined;
  /** Serialises next() calls so overlapping callers each get their own event. */
  private turn: Promise<unknown> = Promise.resolve();
  private readonly options: WatcherOptions;
  private readonly onAbort = () => this.end();

  constructor(options: WatcherOptions) {
    this.options = options;
    this.prefix = options.prefix;
    this.readThrough = options.fromRevision;
    options.fanOut.add(this);
    if (options.signal.aborted) this.end();
    else options.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  wants(event: StoreEvent): boolean {
    return this.buffering && !this.ending && event.revision > this.readThrough && event.key.startsWith(this.prefix);
  }

  offer(event: StoreEvent): void {
    if (this.live.length >= this.options.bufferSize) {
      // Too slow to keep up live: forget the buffer and catch up from the log instead.
      this.buffering = false;
      this.catchingUp = true;
      this.live = [];
    } else {
      this.live.push(event);
    }
    this.wakeUp?.();
  }

  /** Ends the watch: with an error, the next read throws it; without, iteration simply finishes. */
  end(error?: unknown): void {
    if (this.ending) return;
    this.ending = error ? { error } : {};
    this.live = [];
    this.history = [];
    this.options.signal.removeEventListener('abort', this.onAbort);
    this.options.fanOut.remove(this);
    this.wakeUp?.();
  }

  next(): Promise<IteratorResult<StoreEvent>> {
    const result = this.turn.then(() => this.step());
    this.turn = result.catch(() => undefined);
    return result;
  }

  async return(): Promise<IteratorResult<StoreEvent>> {
    this.end();
    this.errorReported = true;
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<StoreEvent> {
    return this;
  }

  private async step(): Promise<IteratorResult<StoreEvent>> {
    for (;;) {
      if (this.ending) {
        const error = this.errorReported ? undefined : this.ending.error;
        this.errorReported = true;
        if (error) throw error;
        return { value: undefined, done: true };
      }
      const replayed = this.history.shift();
      if (replayed) return { value: replayed, done: false };
      if (this.catchingUp) {
        this.readNextChunk();
        continue;
      }
      const event = this.live.shift();
      if (event) {
        if (event.revision <= this.readThrough) continue;
        this.readThrough = event.revision;
        return { value: event, done: false };
      }
      await new Promise<void>((resolve) => (this.wakeUp = resolve));
      this.wakeUp = undefined;
    }
  }

  private readNextChunk(): void {
    // Buffer first, then take the snapshot: whatever commits after the snapshot reaches the buffer.
    this.buffering = true;
    try {
      const chunk = this.options.readLog(this.prefix, this.readThrough);
      this.history = chunk.events;
      this.readThrough = chunk.scannedThrough;
      if (chunk.reachedEnd) this.catchingUp = false;
    } catch (error) {
      this.end(error);
    }
  }
}
