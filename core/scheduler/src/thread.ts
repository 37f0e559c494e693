import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { addMetricsSource, PortCalls, type ApiHandler, type Kernel, type Logger, type MetricsSnapshot, type Registry } from '@skiff/kernel';
import { servePortTransport } from '@skiff/client';
import type { UserInfo } from '@skiff/api';

/** A plugin the worker loads again: its module file and the options it was given. */
export interface WorkerPluginSource {
  name: string;
  file: string;
  options: unknown;
}

/** What the worker thread starts from (structured-cloned into it). */
export interface SchedulerWorkerData {
  config: Record<string, unknown>;
  plugins: WorkerPluginSource[];
  schedulerOptions: Record<string, unknown>;
  /** Where the parent asks for the worker's metrics at every scrape (the worker answers `getMetricsAsJSON()`). */
  metrics?: MessagePort;
}

/** The built worker entry beside this module, or undefined when running from sources (tests). */
function workerFile(): string | undefined {
  const here = import.meta.url;
  if (!here.endsWith('.js')) return undefined;
  const file = fileURLToPath(new URL('./worker.js', here));
  return existsSync(file) ? file : undefined;
}

function resolveFrom(dir: string, name: string): string | undefined {
  try {
    return createRequire(join(dir, 'skiff-resolve.js')).resolve(name);
  } catch {
    return undefined;
  }
}

/**
 * Whether the scheduler can run in a worker thread, and with which plugin modules: every plugin that
 * taps schedulerPlugins must be a loaded plugin whose package resolves (from the user's folder, else
 * from here) — a plugin object made in code cannot be sent to another thread. Answers the reason when not.
 */
export function workerPlan(kernel: Kernel): { file: string; plugins: WorkerPluginSource[] } | { reason: string } {
  const file = workerFile();
  if (!file) return { reason: 'the scheduler runs from its TypeScript sources (no built worker)' };
  const loaded = new Map(kernel.listPlugins().map((entry) => [entry.plugin.name, entry]));
  const plugins: WorkerPluginSource[] = [];
  for (const tap of kernel.hooks.schedulerPlugins.taps) {
    const entry = loaded.get(tap.name);
    if (!entry) return { reason: `scheduler plugins were registered by "${tap.name}", which is not a loaded plugin package` };
    const resolved = resolveFrom(kernel.config.rootDir, tap.name) ?? resolveFrom(fileURLToPath(new URL('.', import.meta.url)), tap.name);
    if (!resolved) return { reason: `plugin package "${tap.name}" cannot be resolved by name` };
    plugins.push({ name: tap.name, file: resolved, options: entry.options });
  }
  return { file, plugins };
}

/** How the worker reaches the API server: this process's, through a message port, or a kubeconfig's over HTTPS. */
export type SchedulerConnection = { handler: ApiHandler; user: UserInfo } | { kubeconfig: string; servers: readonly string[] };

/** The worker's messages to its parent. */
type FromWorker = { type: 'loaded' } | { type: 'ready' } | { type: 'stopped' } | { type: 'error'; message: string };

/**
 * The scheduler in its own thread, talking to this process's API server through a message port. The worker
 * is spawned early (`spawn`, while the store and the API server start) so loading its modules costs the start
 * nothing; `connect` hands it the port once the API server can answer. Given the kernel's registry, its metrics show
 * in the kernel's scrapes (a metrics source asking the worker over a port of its own).
 */
export class SchedulerThread {
  private readonly worker: Worker;
  private readonly exited: Promise<number>;
  private readonly loaded: Promise<void>;
  private stopServing: (() => void) | undefined;
  private readonly stopMetrics: (() => void) | undefined;

  private constructor(
    file: string,
    data: SchedulerWorkerData,
    private readonly logger: Logger,
    metrics?: Registry,
  ) {
    // The worker's scheduler_* metrics join the kernel's registry: every scrape asks the worker for its own.
    const channel = metrics ? new MessageChannel() : undefined;
    const worker = new Worker(file, { workerData: { ...{}, ...data, metrics: channel?.port2 }, transferList: channel ? [channel.port2] : [] });
    if (metrics && channel) {
      const calls = new PortCalls<string>(channel.port1, (message) => new Error(message));
      const remove = addMetricsSource(metrics, () => calls.call({}) as Promise<MetricsSnapshot>);
      this.stopMetrics = () => {
        remove();
        channel.port1.close();
      };
    }
    this.worker = worker;
    this.exited = new Promise((resolve) => worker.once('exit', resolve));
    this.loaded = this.next('loaded');
    // Until someone waits for it, a failure to load is only remembered (the start reports it at connect).
    this.loaded.catch(() => undefined);
    worker.on('error', (err) => this.logger.error({ err }, 'the scheduler thread failed'));
  }

  /** Starts the worker: it loads the scheduler plugins and builds the profiles, then waits for `connect`. */
  static spawn(file: string, data: SchedulerWorkerData, logger: Logger, metrics?: Registry): SchedulerThread {
    return new SchedulerThread(file, data, logger, metrics);
  }

  /** Resolves on the worker's next message of `type`; rejects on its error message, an error or an early exit. */
  private next(type: FromWorker['type']): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onMessage = (message: FromWorker) => {
        if (message.type === type) done(resolve);
        else if (message.type === 'error') done(() => reject(new Error(message.message)));
      };
      const onError = (err: Error) => done(() => reject(err));
      const onExit = (code: number) => done(() => reject(new Error(`the scheduler thread exited with code ${code}`)));
      const done = (settle: () => void) => {
        this.worker.off('message', onMessage);
        this.worker.off('error', onError);
        this.worker.off('exit', onExit);
        settle();
      };
      this.worker.on('message', onMessage);
      this.worker.once('error', onError);
      this.worker.once('exit', onExit);
    });
  }

  /**
   * Starts scheduling in the worker: through a port to this process's API server, or over HTTPS to the API servers a
   * kubeconfig names (the worker makes its own client from the file). Resolves once its informers have synced and it
   * schedules; when `signal` aborts first the worker stops starting and this rejects. `disconnect` ends the term.
   */
  async connect(connection: SchedulerConnection, signal?: AbortSignal): Promise<void> {
    await this.loaded;
    const ready = this.next('ready');
    if ('handler' in connection) {
      const channel = new MessageChannel();
      this.stopServing = servePortTransport(channel.port1, connection.handler, connection.handler.issueLoopbackToken(connection.user));
      this.worker.postMessage({ type: 'connect', port: channel.port2 }, [channel.port2]);
    } else {
      this.worker.postMessage({ type: 'connect', kubeconfig: connection.kubeconfig, servers: connection.servers });
    }
    const abort = () => this.worker.postMessage({ type: 'stop' });
    signal?.addEventListener('abort', abort, { once: true });
    try {
      await ready;
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }

  /** Stops scheduling and waits for the cycle in hand; the thread stays, ready for the next `connect`. */
  async disconnect(): Promise<void> {
    const stopped = this.next('stopped').catch(() => undefined);
    this.worker.postMessage({ type: 'stop' });
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 5000).unref());
    await Promise.race([stopped, this.exited, timeout]);
    this.stopServing?.();
    this.stopServing = undefined;
  }

  async stop(): Promise<void> {
    this.stopMetrics?.();
    await this.disconnect();
    await this.worker.terminate();
    await this.exited;
  }
}
