import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker, type MessagePort } from 'node:worker_threads';
import type { Kernel, Logger } from '@skiff/kernel';
import { ApiServerError } from './errors.js';

/** How long a worker thread may take to start (it loads the preset's plugins again) and to stop. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;
/** A worker thread that ends unexpectedly is started again after this long. */
const RESTART_DELAY_MS = 1_000;

/** On demand: how often the primary looks at its event loop and at the machine's cores. */
const DEMAND_TICK_MS = 1_000;
/** On demand: the primary's event-loop utilization that counts as saturated, and for how many ticks in a row. */
const SATURATED = 0.9;
const SATURATED_TICKS = 2;
/** On demand: after a worker starts, the next one waits this long (the new thread takes load only as it accepts). */
const SPAWN_COOLDOWN_MS = 5_000;

/** When worker threads start (config apiServer.workerStart), and what starting one on demand needs. */
export interface WorkerDemand {
  mode: 'on-demand' | 'at-start';
  /** Idle cores of the machine (0 … cores, averaged over the saturated ticks) that starting a worker needs. */
  idleCores: number;
}

/** The idle share of every core since the previous sample, in cores. */
class IdleCores {
  private last = cpus().map((cpu) => cpu.times);

  sample(): number {
    const now = cpus().map((cpu) => cpu.times);
    let idle = 0;
    let total = 0;
    now.forEach((times, i) => {
      const before = this.last[i];
      if (!before) return;
      idle += times.idle - before.idle;
      total += times.user + times.nice + times.sys + times.irq + times.idle - (before.user + before.nice + before.sys + before.irq + before.idle);
    });
    this.last = now;
    return total > 0 ? (idle / total) * now.length : 0;
  }
}

/** The channel on which a worker thread tells the primary it has had no connection for a while (the message `true`). */
export const WORKER_IDLE_CHANNEL = 'skiff-apiserver/worker-idle';

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
  /** Started on demand: stopped again once it reports it has no connection. */
  onDemand: boolean;
}

/**
 * The API server's worker threads (config `apiServer.workers` less the primary): each runs the request path's kernel
 * (Kernel.workerEntry) over the same store and accepts connections on its own copy of the primary's listening socket,
 * so the kernel hands each new connection to whichever thread accepts it first.
 */
export class ApiServerWorkers {
  private readonly running = new Map<number, Running>();
  private stopped = false;
  private demandTimer: NodeJS.Timeout | undefined;
  private spawning = false;
  private lastSpawn = 0;

  private constructor(
    private readonly kernel: Kernel,
    private readonly listenFd: number,
    private readonly logger: Logger,
    private readonly demand: WorkerDemand,
  ) {}

  /**
   * On the primary, before the API server starts (channels are served before any worker exists): where workers report
   * being idle. `workers()` answers the ApiServerWorkers once started.
   */
  static serveIdleReports(kernel: Kernel, workers: () => ApiServerWorkers | undefined): void {
    kernel.threads.serve(WORKER_IDLE_CHANNEL, (port: MessagePort, index: number) => {
      port.on('message', (idle: boolean) => {
        if (idle) workers()?.retire(index);
      });
    });
  }

  /**
   * At start: threads 1 … count-1 and resolves once every one serves; a thread that fails to start fails the start.
   * On demand: none yet; a thread starts whenever the primary is saturated and a core is idle.
   */
  static async start(kernel: Kernel, listenFd: number, logger: Logger, demand: WorkerDemand): Promise<ApiServerWorkers> {
    if (!kernel.workerEntry)
      throw new ApiServerError('SKIFF_ERR_APISERVER_WORKERS', {
        detail: 'this kernel names no workerEntry to build the request path again in a thread (skiff up and skiff apiserver do)',
      });
    const workers = new ApiServerWorkers(kernel, listenFd, logger, demand);
    if (demand.mode === 'on-demand') {
      workers.watchDemand();
      return workers;
    }
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
    if (this.demandTimer) clearInterval(this.demandTimer);
    await Promise.all([...this.running.values()].map((running) => this.stopOne(running)));
    this.running.clear();
  }

  /** Every tick: a saturated primary and an idle core for SATURATED_TICKS in a row start one more worker. */
  private watchDemand(): void {
    const cores = new IdleCores();
    let last: EventLoopUtilization = performance.eventLoopUtilization();
    let saturatedTicks = 0;
    let idleCores = 0;
    this.demandTimer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const { utilization } = performance.eventLoopUtilization(now, last);
      last = now;
      const idle = cores.sample();
      if (utilization < SATURATED) {
        saturatedTicks = 0;
        idleCores = 0;
        return;
      }
      idleCores += idle;
      if (++saturatedTicks < SATURATED_TICKS) return;
      const averageIdle = idleCores / saturatedTicks;
      saturatedTicks = 0;
      idleCores = 0;
      if (averageIdle < this.demand.idleCores || this.spawning || performance.now() - this.lastSpawn < SPAWN_COOLDOWN_MS) return;
      const index = this.freeIndex();
      if (index === undefined) return;
      this.spawning = true;
      this.lastSpawn = performance.now();
      this.logger.info(
        { worker: index, loop: Number(utilization.toFixed(2)), idleCores: Number(averageIdle.toFixed(2)) },
        `API server thread ${index} starting: the primary's event loop is saturated and a core is idle`,
      );
      this.spawn(index, true)
        .catch((err: unknown) => {
          // A thread that failed to start does not hold its place: the next saturated stretch tries again.
          const failed = this.running.get(index);
          this.running.delete(index);
          void failed?.worker.terminate();
          this.logger.error({ err, worker: index }, `API server worker thread ${index} did not start`);
        })
        .finally(() => {
          this.spawning = false;
          this.lastSpawn = performance.now();
        });
    }, DEMAND_TICK_MS).unref();
  }

  private freeIndex(): number | undefined {
    for (let index = 1; index < this.kernel.threads.count; index++) if (!this.running.has(index)) return index;
    return undefined;
  }

  /** A worker started on demand that reports no connection left is stopped; the listening socket stays with the rest. */
  private retire(index: number): void {
    const running = this.running.get(index);
    if (!running || !running.onDemand || running.stopping || this.stopped) return;
    this.logger.info({ worker: index }, `API server thread ${index} stopping: no connection left`);
    this.running.delete(index);
    this.stopOne(running).catch((err: unknown) => this.logger.error({ err, worker: index }, `API server worker thread ${index} did not stop`));
  }

  private async spawn(index: number, onDemand = false): Promise<void> {
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
    const running: Running = { worker, stopping: false, onDemand };
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
      // On demand, the next saturated stretch starts a thread again.
      if (onDemand) {
        this.logger.error({ worker: index, code }, `API server worker thread ${index} ended`);
        return;
      }
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
