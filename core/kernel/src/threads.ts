import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Kernel } from './kernel.js';

/**
 * How a kernel is spread over threads when the API server's request path runs on every core: the primary thread
 * runs every plugin as one process always did; each API server worker thread runs a kernel of the request path only
 * (store, API server, authentication, authorization, admission), over the same store.
 */

/** How to build this kernel's request path again in a worker thread: a module whose default export makes the kernel. */
export interface WorkerEntry {
  /** A file URL or absolute path of an ES module; its default export is a `WorkerKernelFactory`. */
  module: string;
  /** Passed to the factory as it is (structured-cloned: plain data only). */
  data?: unknown;
}

/** What a worker entry module exports: a kernel (not started) of the request path, built with `options` spread in. */
export type WorkerKernelFactory = (data: unknown, options: { thread: ThreadOptions }) => Promise<Kernel>;

/** What a worker thread's kernel is told about its place (the primary's kernel has none of this). */
export interface ThreadOptions {
  /** 1 … count-1 (0 is the primary). */
  index: number;
  /** How many threads serve the API, the primary's included. */
  count: number;
  /** The primary's shared buffers, by name (see KernelThreads.sharedBuffer). */
  buffers: Record<string, SharedArrayBuffer>;
  /** What the primary hands every worker (the API server: the listening socket). */
  data?: Record<string, unknown>;
  /** The worker's ends of the channels the primary serves (KernelThreads.serve), by name. */
  ports?: Record<string, MessagePort>;
}

/** The most worker threads a config may ask for. */
export const MAX_API_SERVER_WORKERS = 64;

/** `apiServer.workers` when the config says nothing and the kernel can build its request path in a thread: one per core. */
export function defaultApiServerThreads(): number {
  return Math.min(availableParallelism(), MAX_API_SERVER_WORKERS);
}

/** A kernel's place among the API server's threads (`kernel.threads`): which one it is, and what they share. */
export class KernelThreads {
  /** 0 on the primary thread; 1 … count-1 on a worker thread. */
  readonly index: number;
  /** What the primary handed this worker; empty on the primary. */
  readonly data: Readonly<Record<string, unknown>>;
  private readonly buffers: Map<string, SharedArrayBuffer>;
  private readonly fixedCount: number | undefined;
  private readonly servers = new Map<string, (port: MessagePort, index: number) => void>();
  private readonly ports: Readonly<Record<string, MessagePort>>;

  constructor(
    private readonly configured: () => number,
    options?: ThreadOptions,
  ) {
    this.index = options?.index ?? 0;
    this.fixedCount = options?.count;
    this.data = options?.data ?? {};
    this.buffers = new Map(Object.entries(options?.buffers ?? {}));
    this.ports = options?.ports ?? {};
  }

  /** How many threads serve the API (1: only the primary, as a single process). */
  get count(): number {
    return this.fixedCount ?? this.configured();
  }

  /** The primary runs everything; a worker only the request path, and no job that must run once per cluster. */
  get primary(): boolean {
    return this.index === 0;
  }

  /**
   * Memory every thread of the process sees under `name`: made (zeroed) by the primary on first use, found by each
   * worker. A plugin asks for it in its start, which runs on the primary before any worker thread exists.
   */
  sharedBuffer(name: string, bytes: number): SharedArrayBuffer {
    let buffer = this.buffers.get(name);
    if (!buffer) {
      if (!this.primary) throw new Error(`shared buffer "${name}" was not made by the primary thread before this worker started`);
      buffer = new SharedArrayBuffer(bytes);
      this.buffers.set(name, buffer);
    }
    if (buffer.byteLength < bytes) throw new Error(`shared buffer "${name}" has ${buffer.byteLength} bytes, not ${bytes}`);
    return buffer;
  }

  /**
   * On the primary: answers every worker thread on a channel of its own under `name` — `handler` gets the primary's
   * end as each worker is started. A plugin serves in its start, before any worker thread exists.
   */
  serve(name: string, handler: (port: MessagePort, index: number) => void): void {
    if (!this.primary) throw new Error(`only the primary thread serves channels (asked for "${name}")`);
    this.servers.set(name, handler);
  }

  /** On a worker: its end of the primary's channel `name`; undefined when the primary serves none of that name. */
  port(name: string): MessagePort | undefined {
    return this.ports[name];
  }

  /**
   * For whoever starts worker thread `index`: a channel per served name, the primary's ends handed to their handlers;
   * pass the worker's ends as ThreadOptions.ports and in the Worker's transferList.
   */
  connect(index: number): Record<string, MessagePort> {
    const theirs: Record<string, MessagePort> = {};
    for (const [name, handler] of this.servers) {
      const { port1, port2 } = new MessageChannel();
      port1.unref();
      handler(port1, index);
      theirs[name] = port2;
    }
    return theirs;
  }

  /** Every shared buffer by name, to hand to a worker thread. */
  sharedBuffers(): Record<string, SharedArrayBuffer> {
    return Object.fromEntries(this.buffers);
  }
}

/** An answer to a call made with PortCalls: its value, or what the callee's error was (as `F`, plain data). */
export type PortAnswer<F> = { id: number; value: unknown } | { id: number; failure: F };

/**
 * Calls over a MessagePort between threads, each answered once by `answerCalls` on the other end. Waiting for answers
 * keeps the thread alive; an idle port does not.
 */
export class PortCalls<F> {
  private next = 0;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();

  /** `errorOf` turns a failure the other end sent back into the error the call throws. */
  constructor(
    private readonly port: MessagePort,
    errorOf: (failure: F) => Error,
  ) {
    port.on('message', (answer: PortAnswer<F>) => {
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      if (this.pending.size === 0) this.port.unref();
      if ('failure' in answer) waiting.reject(errorOf(answer.failure));
      else waiting.resolve(answer.value);
    });
    port.unref();
  }

  /** Sends `message` (plain data, with ports in `transfer`) and resolves with the other end's answer. */
  call(message: object, transfer: MessagePort[] = []): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.port.ref();
      this.pending.set(id, { resolve, reject });
      this.port.postMessage({ ...{}, ...message, id }, transfer);
    });
  }
}

/** The other end of PortCalls: answers each call with what `handle` resolves to, or with `failureOf` its error. */
export function answerCalls<C extends object, F>(port: MessagePort, handle: (call: C) => Promise<unknown>, failureOf: (err: unknown) => F): void {
  port.on('message', (call: C & { id: number }) => {
    handle(call).then(
      (value) => port.postMessage({ id: call.id, value } satisfies PortAnswer<F>),
      (err: unknown) => port.postMessage({ id: call.id, failure: failureOf(err) } satisfies PortAnswer<F>),
    );
  });
}
