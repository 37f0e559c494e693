import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Kernel, Logger } from '@skiff/kernel';
import { ApiServerError } from './errors.js';

/** How long a worker thread may take to start (it loads the preset's plugins again) and to stop. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;
/** A worker thread that ends unexpectedly is started again after this long. */
const RESTART_DELAY_MS = 1_000;

/** The worker thread's script: next to this module once built, in dist/ when the source runs (tests). */
function workerScript(): URL {
  const built = new URL('./worker-thread.js', import.meta.url);
  return existsSync(fileURLToPath(built)) ? built : new URL('../dist/worker-thread.js', import.meta.url);
}

/**
 * A descriptor of the listening socket that the worker owns alone. Threads of one process share descriptors: were
 * they all to listen on the primary's, the first to close would close it for everyone (and the others would close a
 * number the process may have reused). `dup` comes from libc through koffi (Node 20 can neither duplicate a
 * descriptor nor set SO_REUSEPORT).
 */
async function duplicate(fd: number): Promise<number> {
  const { default: koffi } = await import('koffi');
  const dup = koffi.load('libc.so.6').func('int dup(int)') as (fd: number) => number;
  const copy = dup(fd);
  if (copy < 0) throw new Error(`dup(${fd}) failed`);
  return copy;
}

interface Running {
  worker: Worker;
  stopping: boolean;
}

/**
 * The API server's worker threads (config `apiServer.workers` less the primary): each runs the request path's kernel
 * (Kernel.workerEntry) over the same store and accepts connections on its own copy of the primary's listening socket,
 * so the kernel hands each new connection to whichever thread accepts it first.
 */
export class ApiServerWorkers {
  private readonly running = new Map<number, Running>();
  private stopped = false;

  private constructor(
    private readonly kernel: Kernel,
    private readonly listenFd: number,
    private readonly logger: Logger,
  ) {}

  /** Starts threads 1 … count-1 and resolves once every one serves; a thread that fails to start fails the start. */
  static async start(kernel: Kernel, listenFd: number, logger: Logger): Promise<ApiServerWorkers> {
    if (!kernel.workerEntry)
      throw new ApiServerError('SKIFF_ERR_APISERVER_WORKERS', {
        detail: 'this kernel names no workerEntry to build the request path again in a thread (skiff up and skiff apiserver do)',
      });
    const workers = new ApiServerWorkers(kernel, listenFd, logger);
    try {
      await Promise.all(Array.from({ length: kernel.threads.count - 1 }, (_, i) => workers.spawn(i + 1)));
    } catch (err) {
      await workers.stop();
      throw err;
    }
    return workers;
  }

  get size(): number {
    return this.running.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running.values()].map((running) => this.stopOne(running)));
    this.running.clear();
  }

  private async spawn(index: number): Promise<void> {
    const { kernel } = this;
    const fd = await duplicate(this.listenFd);
    const ports = kernel.threads.connect(index);
    const worker = new Worker(workerScript(), {
      workerData: {
        entry: kernel.workerEntry,
        thread: { index, count: kernel.threads.count, buffers: kernel.threads.sharedBuffers(), data: { listenFd: fd }, ports },
      },
      transferList: Object.values(ports),
      // Not the primary's flags (a test runner's loaders): the thread runs the built packages.
      execArgv: [],
      stdout: false,
      stderr: false,
    });
    const running: Running = { worker, stopping: false };
    this.running.set(index, running);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(this.failure(index, `not ready after ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      const settle = (error?: Error) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        if (error) reject(error);
        else resolve();
      };
      const onMessage = (message: { type: string; message?: string }) => {
        if (message.type === 'ready') settle();
        else if (message.type === 'failed') settle(this.failure(index, message.message ?? 'it failed'));
      };
      worker.on('message', onMessage);
      worker.once('error', (err) => settle(this.failure(index, err.message)));
      worker.once('exit', (code) => settle(this.failure(index, `it exited (${code}) while starting`)));
    });
    worker.once('exit', (code) => {
      if (running.stopping || this.stopped) return;
      this.running.delete(index);
      this.logger.error({ worker: index, code }, `API server worker thread ${index} ended; starting it again`);
      setTimeout(() => {
        if (!this.stopped)
          this.spawn(index).catch((err: unknown) => this.logger.error({ err, worker: index }, `API server worker thread ${index} did not start again`));
      }, RESTART_DELAY_MS).unref();
    });
    worker.on('error', (err) => this.logger.error({ err, worker: index }, `API server worker thread ${index} failed`));
    this.logger.debug({ worker: index }, 'API server worker thread serving');
  }

  private async stopOne(running: Running): Promise<void> {
    running.stopping = true;
    const { worker } = running;
    const ended = new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.on('message', (message: { type?: string }) => {
        if (message.type === 'stopped') resolve();
      });
    });
    worker.postMessage({ type: 'stop' });
    const timer = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
    await ended;
    clearTimeout(timer);
    await worker.terminate();
  }

  private failure(index: number, detail: string): ApiServerError {
    return new ApiServerError('SKIFF_ERR_APISERVER_WORKERS', { detail: `worker thread ${index}: ${detail}` });
  }
}
