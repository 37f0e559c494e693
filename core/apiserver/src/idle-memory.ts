/**
 * Gives memory back after a burst of requests. Each API server thread keeps the heap a burst grew to: V8 collects the
 * garbage but keeps its pages until a later collection finds the allocation rate low, and an idle server allocates
 * nothing, so nothing comes to collect. This watches the thread's event-loop utilization once a second; after a
 * second above BUSY, the first QUIET_TICKS seconds in a row below QUIET run a full collection, and a second one
 * SECOND_GC_MS later, which returns the pages the first one emptied (measured in docs/api-server-threads.md).
 * Every thread runs its own (each isolate has its own heap). A pause of a full collection of this heap is 15–35 ms,
 * only when the thread has just become idle.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const TICK_MS = 1000;
const BUSY = 0.2;
const QUIET = 0.05;
const QUIET_TICKS = 2;
const SECOND_GC_MS = 1500;

let collect: (() => void) | undefined;

/** V8's full collection, exposed to a context of our own only: nothing else in the process sees a `gc` global. */
function fullCollection(): () => void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  return collect;
}

export interface IdleMemoryStats {
  /** Collections run since the start. */
  collections: number;
}

export class IdleMemory {
  readonly stats: IdleMemoryStats = { collections: 0 };
  private readonly timer: NodeJS.Timeout;
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private burst = false;
  private quiet = 0;
  private pending: NodeJS.Timeout | undefined;

  constructor(private readonly onCollect?: (pauseMs: number) => void) {
    this.timer = setInterval(() => this.tick(), TICK_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.pending) clearTimeout(this.pending);
  }

  private tick(): void {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, this.last);
    this.last = now;
    if (utilization > BUSY) {
      this.burst = true;
      this.quiet = 0;
      return;
    }
    if (!this.burst || utilization >= QUIET || ++this.quiet < QUIET_TICKS) return;
    this.burst = false;
    this.quiet = 0;
    this.run();
    this.pending = setTimeout(() => {
      this.pending = undefined;
      // A new burst started meanwhile: its end collects again.
      if (!this.burst) this.run();
    }, SECOND_GC_MS).unref();
  }

  private run(): void {
    const started = performance.now();
    fullCollection()();
    this.stats.collections++;
    this.onCollect?.(performance.now() - started);
  }
}
