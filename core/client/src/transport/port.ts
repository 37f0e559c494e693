import { ApiError, errorMessage } from '@skiff/api';
import {
  joinRemoteTrace,
  markEvent,
  recordForeignSpans,
  traceOfEvent,
  traceParentOf,
  tracingActive,
  type ApiHandler,
  type Span,
  type WatchEvent,
} from '@skiff/kernel';
import type { MessagePort } from 'node:worker_threads';
import { isSuccess, statusError } from './status-error.js';
import { isWatchRequest, type Transport, type TransportRequest, type TransportResponse } from './types.js';

/** What crosses the port: requests one way; answers, watch events and their end the other. */
type ToServer =
  | { id: number; type: 'request'; request: Omit<TransportRequest, 'signal'> }
  | { id: number; type: 'cancel' }
  | { id: number; type: 'spans'; spans: Span[] };
type ToClient =
  | { id: number; type: 'response'; status: number; body?: unknown }
  | { id: number; type: 'error'; status: number; body: unknown }
  | { id: number; type: 'stream'; status: number }
  | { id: number; type: 'events'; events: WatchEvent[]; traces?: Record<number, string> }
  | { id: number; type: 'end'; error?: { status: number; body: unknown } };

/** An answer's error as a Status body and code, whatever the transport threw. */
function errorBody(err: unknown): { status: number; body: unknown } {
  if (err instanceof ApiError) return { status: err.status, body: err.toStatus() };
  return { status: 500, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500, message: errorMessage(err) } };
}

/**
 * Serves a PortTransport on the other end of `port` with the API server's in-process handler, as the
 * loopback does (the whole pipeline, authenticated by `token`) but without its defensive copies: the
 * message port copies every body anyway. Watch events are forwarded in batches, one message per tick.
 * Returns a function that stops serving and ends every open watch.
 */
export function servePortTransport(port: MessagePort, handler: ApiHandler, token: string): () => void {
  const watches = new Map<number, AbortController>();
  const authorization = `Bearer ${token}`;
  const onMessage = (message: ToServer) => {
    if (message.type === 'cancel') {
      watches.get(message.id)?.abort();
      watches.delete(message.id);
      return;
    }
    if (message.type === 'spans') {
      recordForeignSpans(message.spans);
      return;
    }
    const { id, request } = message;
    const abort = isWatchRequest(request) ? new AbortController() : undefined;
    if (abort) watches.set(id, abort);
    handler
      .handle({ ...{}, ...request, headers: { ...{}, ...request.headers, authorization }, ...(abort ? { signal: abort.signal } : {}) })
      .then(async (response) => {
        if (!isSuccess(response.status)) {
          watches.delete(id);
          port.postMessage({ id, type: 'error', status: response.status, body: response.body } satisfies ToClient);
          return;
        }
        if (!response.stream) {
          watches.delete(id);
          port.postMessage({ id, type: 'response', status: response.status, body: response.body } satisfies ToClient);
          return;
        }
        port.postMessage({ id, type: 'stream', status: response.status } satisfies ToClient);
        let batch: WatchEvent[] = [];
        // Events of traced writes carry their trace across (the port copies events, so the object's mark does not).
        let traces: Record<number, string> | undefined;
        let scheduled = false;
        const flush = () => {
          scheduled = false;
          if (batch.length === 0) return;
          port.postMessage({ id, type: 'events', events: batch, ...(traces ? { traces } : {}) } satisfies ToClient);
          batch = [];
          traces = undefined;
        };
        try {
          for await (const event of response.stream) {
            const traced = tracingActive() ? traceOfEvent(event) : undefined;
            if (traced) (traces ??= {})[batch.length] = traceParentOf(traced);
            batch.push(event);
            if (!scheduled) {
              scheduled = true;
              setImmediate(flush);
            }
          }
          flush();
          port.postMessage({ id, type: 'end' } satisfies ToClient);
        } catch (err) {
          flush();
          port.postMessage({ id, type: 'end', ...(abort?.signal.aborted ? {} : { error: errorBody(err) }) } satisfies ToClient);
        } finally {
          watches.delete(id);
        }
      })
      .catch((err: unknown) => {
        watches.delete(id);
        port.postMessage({ id, type: 'error', ...errorBody(err) } satisfies ToClient);
      });
  };
  port.on('message', onMessage);
  return () => {
    port.off('message', onMessage);
    for (const abort of watches.values()) abort.abort();
    watches.clear();
  };
}

interface Pending {
  resolve(response: TransportResponse): void;
  reject(err: unknown): void;
  /** For a watch: where its events go once the stream has started. */
  stream?: EventQueue;
}

/** Events waiting for the consumer of one watch stream. */
class EventQueue {
  private readonly events: WatchEvent[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private error: unknown;

  push(events: WatchEvent[]): void {
    for (const event of events) this.events.push(event);
    this.wake?.();
  }

  end(error?: unknown): void {
    this.ended = true;
    this.error = error;
    this.wake?.();
  }

  async *iterate(onReturn: () => void): AsyncGenerator<WatchEvent> {
    try {
      for (;;) {
        while (this.events.length > 0) yield this.events.shift()!;
        if (this.ended) {
          if (this.error) throw this.error;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      if (!this.ended) onReturn();
    }
  }
}

/**
 * A transport whose requests are served on the other end of a MessagePort (a worker thread talking to
 * the API server of its parent, say): objects cross as structured clones instead of JSON over TLS.
 */
export class PortTransport implements Transport {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly port: MessagePort) {
    port.on('message', (message: ToClient) => this.receive(message));
  }

  request(request: TransportRequest): Promise<TransportResponse> {
    const id = this.nextId++;
    const { signal, ...plain } = request;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      this.pending.set(id, { resolve, reject });
      signal?.addEventListener(
        'abort',
        () => {
          const entry = this.pending.get(id);
          this.port.postMessage({ id, type: 'cancel' } satisfies ToServer);
          if (entry?.stream) entry.stream.end();
          else if (entry) {
            this.pending.delete(id);
            entry.reject(signal.reason ?? new Error('aborted'));
          }
        },
        { once: true },
      );
      this.port.postMessage({ id, type: 'request', request: plain } satisfies ToServer);
    });
  }

  close(): void {
    this.port.close();
  }

  /** Events of traced writes continue their trace here; spans recorded in it go back to the server's thread. */
  private markTraced(events: WatchEvent[], traces: Record<number, string>): void {
    const send = (spans: Span[]) => this.port.postMessage({ id: 0, type: 'spans', spans } satisfies ToServer);
    for (const [index, traceparent] of Object.entries(traces)) {
      const event = events[Number(index)];
      const ctx = event && joinRemoteTrace(traceparent, 'apiserver', send);
      if (ctx) markEvent(event, ctx);
    }
  }

  private receive(message: ToClient): void {
    const entry = this.pending.get(message.id);
    if (!entry) return;
    switch (message.type) {
      case 'response':
        this.pending.delete(message.id);
        entry.resolve({ status: message.status, body: message.body });
        return;
      case 'error':
        this.pending.delete(message.id);
        entry.reject(statusError(message.body, message.status));
        return;
      case 'stream': {
        const queue = new EventQueue();
        entry.stream = queue;
        const stream = queue.iterate(() => {
          this.pending.delete(message.id);
          this.port.postMessage({ id: message.id, type: 'cancel' } satisfies ToServer);
        });
        entry.resolve({ status: message.status, stream });
        return;
      }
      case 'events':
        if (message.traces) this.markTraced(message.events, message.traces);
        entry.stream?.push(message.events);
        return;
      case 'end':
        this.pending.delete(message.id);
        entry.stream?.end(message.error ? statusError(message.error.body, message.error.status) : undefined);
    }
  }
}
