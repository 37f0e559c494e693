import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { ApiHandler, Kernel, Logger } from '@skiff/kernel';
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

/** The scheduler in its own thread, talking to this process's API server through a message port. */
export class SchedulerThread {
  private worker: Worker | undefined;
  private stopServing: (() => void) | undefined;
  private exited: Promise<void> | undefined;

  constructor(
    private readonly file: string,
    private readonly data: SchedulerWorkerData,
    private readonly logger: Logger,
  ) {}

  /** Starts the worker and resolves once its informers have synced and it schedules (or rejects with its start error). */
  async start(handler: ApiHandler, user: UserInfo): Promise<void> {
    const channel = new MessageChannel();
    this.stopServing = servePortTransport(channel.port1, handler, handler.issueLoopbackToken(user));
    const worker = new Worker(this.file, { workerData: { ...this.data, port: channel.port2 }, transferList: [channel.port2] });
    this.worker = worker;
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: { type: string; message?: string }) => {
        if (message.type === 'ready') {
          worker.off('message', onMessage);
          resolve();
        } else if (message.type === 'error') {
          reject(new Error(message.message));
        }
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the scheduler thread exited with code ${code} before it was ready`)));
    });
    worker.on('error', (err) => this.logger.error({ err }, 'the scheduler thread failed'));
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const stopped = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5000);
      timer.unref();
      worker.on('message', (message: { type: string }) => {
        if (message.type === 'stopped') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    worker.postMessage({ type: 'stop' });
    await Promise.race([stopped, this.exited]);
    this.stopServing?.();
    await worker.terminate();
    await this.exited;
  }
}
