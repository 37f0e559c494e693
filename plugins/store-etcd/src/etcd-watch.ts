import type { ClientDuplexStream } from '@grpc/grpc-js';
import type { Logger } from '@skiff/kernel';
import type { EtcdClient, WatchEvent, WatchResponse } from './etcd-client.js';

export interface EtcdWatchHandlers {
  /** The events of one or more whole revisions, in order. */
  events(events: WatchEvent[], headerRevision: number): void;
  /** Everything up to `revision` has been delivered (a progress notification, or the answer to a progress request). */
  progress(revision: number): void;
  /** etcd no longer holds the revisions this watch needs: it has ended. */
  compacted(compactRevision: number): void;
  /** No member could be reached for longer than the client retries: the watch has ended. */
  failed(err: Error): void;
}

export interface EtcdWatchOptions {
  key: Buffer;
  rangeEnd: Buffer;
  /** Events after this revision (exclusive). */
  afterRevision: number;
  retryForMs: number;
  logger?: Logger;
}

/**
 * One etcd watch (a Watch stream with one watcher) that survives its member: when the stream breaks it is opened
 * again on the next member from the last revision it delivered, so no event is lost or repeated.
 */
export class EtcdWatch {
  private stream: ClientDuplexStream<object, WatchResponse> | undefined;
  private after: number;
  private ended = false;
  private brokenSince: number | undefined;
  private created: { resolve: () => void; reject: (err: Error) => void } | undefined;

  constructor(
    private readonly client: EtcdClient,
    private readonly options: EtcdWatchOptions,
    private readonly handlers: EtcdWatchHandlers,
  ) {
    this.after = options.afterRevision;
  }

  /** Resolves once etcd has created the watcher. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.created = { resolve, reject };
      this.open();
    });
  }

  /** Asks etcd for the revision everything has been delivered up to (answered through `progress`). */
  requestProgress(): void {
    this.stream?.write({ progress_request: {} });
  }

  stop(): void {
    if (this.ended) return;
    this.ended = true;
    this.stream?.cancel();
    this.stream = undefined;
  }

  private open(): void {
    if (this.ended) return;
    let stream: ClientDuplexStream<object, WatchResponse>;
    try {
      stream = this.client.watchStream();
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    this.stream = stream;
    stream.on('data', (answer: WatchResponse) => this.answer(stream, answer));
    stream.on('error', (err: Error) => this.broken(stream, err));
    stream.on('end', () => this.broken(stream, new Error('the etcd watch stream ended')));
    stream.write({
      create_request: {
        key: this.options.key,
        range_end: this.options.rangeEnd,
        start_revision: this.after + 1,
        prev_kv: true,
        progress_notify: true,
      },
    });
  }

  private answer(stream: ClientDuplexStream<object, WatchResponse>, answer: WatchResponse): void {
    if (stream !== this.stream || this.ended) return;
    if (answer.created) {
      this.brokenSince = undefined;
      this.created?.resolve();
      this.created = undefined;
    }
    if (answer.compact_revision > 0 || answer.canceled) {
      this.stop();
      if (answer.compact_revision > 0) this.handlers.compacted(answer.compact_revision);
      else this.handlers.failed(new Error(`etcd canceled the watch: ${answer.cancel_reason || 'no reason given'}`));
      this.created?.reject(new Error(`etcd refused the watch (compacted at ${answer.compact_revision})`));
      this.created = undefined;
      return;
    }
    if (answer.events.length > 0) {
      const last = answer.events[answer.events.length - 1]!.kv.mod_revision;
      // A fragment of a larger revision waits for the rest (fragments are only sent when asked for; kept for safety).
      this.after = Math.max(this.after, last);
      this.handlers.events(answer.events, answer.header.revision);
    } else if (!answer.created) {
      this.handlers.progress(answer.header.revision);
    }
  }

  private broken(stream: ClientDuplexStream<object, WatchResponse>, err: Error): void {
    if (stream !== this.stream || this.ended) return;
    this.stream = undefined;
    stream.cancel();
    this.brokenSince ??= Date.now();
    if (Date.now() - this.brokenSince > this.options.retryForMs) {
      this.fail(err);
      return;
    }
    this.options.logger?.debug({ err: err.message, after: this.after }, 'etcd watch broke; opening it again on the next member');
    this.client.failOver();
    setTimeout(() => this.open(), 100).unref();
  }

  private fail(err: Error): void {
    this.ended = true;
    this.created?.reject(err);
    this.created = undefined;
    this.handlers.failed(err);
  }
}
