import { exponentialBuckets, gauge, seriesCounter, seriesHistogram, type CounterSeries, type HistogramSeries, type Registry } from '@skiff/kernel';

/** client-go's buckets for the queue and work durations: 10 ns … 1 s by factors of ten. */
const DURATION_BUCKETS = exponentialBuckets(1e-8, 10, 10);

/** What a work queue reports when scraped: its depth and what its workers hold. */
export interface QueueState {
  depth(): number;
  /** When each item being processed was handed out (performance.now()). */
  processingSince(): Iterable<number>;
}

/**
 * One work queue's metrics, with client-go's names and label (`name`): workqueue_adds_total, workqueue_depth,
 * workqueue_queue_duration_seconds, workqueue_work_duration_seconds, workqueue_retries_total,
 * workqueue_unfinished_work_seconds and workqueue_longest_running_processor_seconds.
 */
export class WorkQueueMetrics {
  private readonly adds: CounterSeries;
  private readonly retries: CounterSeries;
  private readonly queueDuration: HistogramSeries;
  private readonly workDuration: HistogramSeries;

  constructor(registry: Registry, name: string, state: QueueState) {
    const labels = { name };
    const labelNames = ['name'];
    this.adds = seriesCounter(registry, { name: 'workqueue_adds_total', help: 'Items added to the work queue.', labelNames }).series(labels);
    this.retries = seriesCounter(registry, { name: 'workqueue_retries_total', help: 'Items added back to the work queue after a failure.', labelNames }).series(
      labels,
    );
    this.queueDuration = seriesHistogram(registry, {
      name: 'workqueue_queue_duration_seconds',
      help: 'Seconds an item waited in the work queue before a worker took it.',
      labelNames,
      buckets: DURATION_BUCKETS,
    }).series(labels);
    this.workDuration = seriesHistogram(registry, {
      name: 'workqueue_work_duration_seconds',
      help: 'Seconds a worker spent on one item.',
      labelNames,
      buckets: DURATION_BUCKETS,
    }).series(labels);
    queueGauges(registry).set(name, state);
  }

  added(): void {
    this.adds.inc();
  }

  retried(): void {
    this.retries.inc();
  }

  /** An item waited `seconds` in the queue before a worker took it. */
  waited(seconds: number): void {
    this.queueDuration.observe(seconds);
  }

  /** A worker spent `seconds` on an item. */
  worked(seconds: number): void {
    this.workDuration.observe(seconds);
  }
}

/** The queues of one registry whose gauges are read at scrape time, by name. */
const gaugeStates = new WeakMap<Registry, Map<string, QueueState>>();

function queueGauges(registry: Registry): Map<string, QueueState> {
  let states = gaugeStates.get(registry);
  if (states) return states;
  const known = (states = new Map<string, QueueState>());
  gaugeStates.set(registry, known);
  const labelNames = ['name'];
  gauge(registry, {
    name: 'workqueue_depth',
    help: 'Items waiting in the work queue now.',
    labelNames,
    collect() {
      for (const [name, state] of known) this.set({ name }, state.depth());
    },
  });
  const processing = (reduce: (seconds: number[]) => number) =>
    function (this: { set(labels: { name: string }, value: number): void }) {
      const now = performance.now();
      for (const [name, state] of known) this.set({ name }, reduce([...state.processingSince()].map((since) => (now - since) / 1000)));
    };
  gauge(registry, {
    name: 'workqueue_unfinished_work_seconds',
    help: 'Seconds spent so far on the items being worked on now, summed.',
    labelNames,
    collect: processing((seconds) => seconds.reduce((sum, value) => sum + value, 0)),
  });
  gauge(registry, {
    name: 'workqueue_longest_running_processor_seconds',
    help: 'Seconds the oldest item being worked on has been at it.',
    labelNames,
    collect: processing((seconds) => seconds.reduce((max, value) => Math.max(max, value), 0)),
  });
  return states;
}
