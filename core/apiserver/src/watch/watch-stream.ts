import { errorMessage, errors, type KubeObject } from '@skiff/api';
import { linkedWrite, markEvent, recordSpan, spanClock, tracingActive, type Logger, type WatchEvent } from '@skiff/kernel';
import { StoreError, type Store, type StoreEvent } from '@skiff/store';
import { longTimeout } from '../util/long-timeout.js';
import { translateEvent } from './transitions.js';

export interface WatchStreamOptions {
  store: Store;
  logger: Logger;
  prefix: string;
  filter?: (object: KubeObject) => boolean;
  /** Send the current matches as ADDED first (resourceVersion absent or 0, or sendInitialEvents=true). */
  initialEvents: boolean;
  /** Resume after this revision; ignored when `initialEvents` (the list's snapshot revision is used). */
  fromRevision: number;
  /** Builds a BOOKMARK object (the kind's apiVersion/kind with only metadata). */
  bookmark?: { apiVersion: string; kind: string; intervalMs: number; afterInitialEvents: boolean };
  /** Turns each event's object into what the client asked for (a one-row Table, say). */
  transform?: (object: KubeObject) => KubeObject;
  timeoutMs?: number;
  /** The stream ends when any of these aborts (the client went away, the server stops). */
  signals: (AbortSignal | undefined)[];
  /** Who watches (user and resource), named in the spans of traced events. */
  watcher?: string;
}

const WOKEN = Symbol('woken');

/**
 * What interrupts a wait for the next store event: a bookmark falling due, or the stream stopping.
 * Each wait races the store's next event against a promise of its own, made for that wait alone and
 * dropped after it, so nothing outlives the wait. (Racing every event against one long-lived promise
 * would leave a reaction on that promise per event: memory that grows with every event of the watch.)
 */
class WakeUp {
  private wake: (() => void) | undefined;
  bookmarkDue = false;

  wait(): Promise<typeof WOKEN> {
    return new Promise((resolve) => (this.wake = () => resolve(WOKEN)));
  }

  /** Ends the current wait, if any. */
  interrupt(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/**
 * A watch as an async iterable of events. It pulls from the store's watch, so a slow client slows only
 * its own watch (no unbounded buffering here), and between store events it wakes for bookmarks, the
 * timeout and aborts.
 */
export async function* watchStream(options: WatchStreamOptions): AsyncGenerator<WatchEvent> {
  const controller = new AbortController();
  const wakeUp = new WakeUp();
  const stop = () => {
    controller.abort();
    wakeUp.interrupt();
  };
  const signals = options.signals.filter((signal): signal is AbortSignal => Boolean(signal));
  for (const signal of signals) {
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  }
  // timeoutSeconds may be years: a plain setTimeout past 2^31-1 ms would end the watch at once.
  const cancelTimeout = options.timeoutMs !== undefined ? longTimeout(stop, options.timeoutMs) : undefined;
  const bookmarks = options.bookmark
    ? setInterval(() => {
        wakeUp.bookmarkDue = true;
        wakeUp.interrupt();
      }, options.bookmark.intervalMs)
    : undefined;
  const transform = options.transform ?? ((object: KubeObject) => object);
  let revision = options.fromRevision;
  let events: AsyncIterator<StoreEvent> | undefined;
  try {
    if (options.initialEvents) {
      const list = await options.store.list(options.prefix, options.filter ? { filter: options.filter } : {});
      for (const item of list.items) {
        if (controller.signal.aborted) return;
        yield { type: 'ADDED', object: transform(item.object) };
      }
      revision = list.revision;
      if (options.bookmark?.afterInitialEvents) yield bookmarkEvent(options.bookmark, revision, true);
    }
    const iterator = options.store.watch(options.prefix, revision, controller.signal)[Symbol.asyncIterator]();
    events = iterator;
    // The pending read survives a wake-up (a bookmark), so no event is lost; it is raced again next time.
    let pending: Promise<IteratorResult<StoreEvent>> | undefined;
    for (;;) {
      if (controller.signal.aborted) return;
      if (wakeUp.bookmarkDue) {
        wakeUp.bookmarkDue = false;
        yield bookmarkEvent(options.bookmark!, revision, false);
        continue;
      }
      pending ??= iterator.next();
      const next = await Promise.race([pending, wakeUp.wait()]);
      if (next === WOKEN) continue;
      pending = undefined;
      if (next.done) return;
      revision = next.value.revision;
      const event = translateEvent(next.value, options.filter);
      if (event) {
        const out: WatchEvent = { type: event.type, object: transform(event.object) };
        if (tracingActive()) linkEvent(out, next.value.key, options.watcher);
        yield out;
      }
    }
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'Compacted') {
      yield { type: 'ERROR', object: errors.gone(`too old resource version: ${revision} (${options.store.compactedRevision()})`).toStatus() };
    } else if (!controller.signal.aborted) {
      options.logger.error({ err, prefix: options.prefix }, 'watch failed');
      yield { type: 'ERROR', object: errors.internal(errorMessage(err)).toStatus() };
    }
  } finally {
    stop();
    cancelTimeout?.();
    clearInterval(bookmarks);
    for (const signal of signals) signal.removeEventListener('abort', stop);
    events?.return?.().catch(() => undefined);
  }
}

/** A watch event of a traced write continues its trace: a span for the delivery, and the event carries it on. */
function linkEvent(event: WatchEvent, key: string, watcher: string | undefined): void {
  const write = linkedWrite(key);
  if (!write) return;
  const delivered = recordSpan(
    write,
    { name: `watch ${event.type} → ${watcher ?? 'watcher'}`, kind: 'watch', component: 'apiserver', attrs: { key } },
    spanClock(),
  );
  markEvent(event, delivered);
}

function bookmarkEvent(bookmark: NonNullable<WatchStreamOptions['bookmark']>, revision: number, initialEventsEnd: boolean): WatchEvent {
  return {
    type: 'BOOKMARK',
    object: {
      apiVersion: bookmark.apiVersion,
      kind: bookmark.kind,
      metadata: {
        resourceVersion: String(revision),
        ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
      },
    },
  };
}
