import { exponentialBuckets, gauge, seriesCounter, seriesHistogram, type CounterSeries, type HistogramSeries, type Registry } from '@skiff/kernel';

/** An attempt's outcome, as upstream's `result` label names it. */
export type AttemptResult = 'scheduled' | 'unschedulable' | 'error';

/** How many pods wait in each part of a scheduling queue, as upstream's `queue` label names them. */
export interface PendingCounts {
  active: number;
  backoff: number;
  unschedulable: number;
  gated: number;
}

/** Upstream's attempt buckets: 1 ms × 2ⁿ, n = 0 … 14. */
const ATTEMPT_BUCKETS = exponentialBuckets(0.001, 2, 15);
/** Upstream's end-to-end buckets: 10 ms × 2ⁿ, n = 0 … 19. */
const SLI_BUCKETS = exponentialBuckets(0.01, 2, 20);

/** The queues whose pending pods a registry's gauge reports at scrape time. */
const queuesOf = new WeakMap<Registry, Set<() => PendingCounts>>();

function pendingGauge(registry: Registry): Set<() => PendingCounts> {
  let queues = queuesOf.get(registry);
  if (queues) return queues;
  const known = (queues = new Set<() => PendingCounts>());
  queuesOf.set(registry, known);
  gauge(registry, {
    name: 'scheduler_pending_pods',
    help: 'Pods waiting to be scheduled, by queue: active, backoff, unschedulable (tried, fit nowhere) and gated (held by a preEnqueue plugin).',
    labelNames: ['queue'],
    collect() {
      const total: PendingCounts = { active: 0, backoff: 0, unschedulable: 0, gated: 0 };
      for (const counts of known) {
        const counted = counts();
        for (const queue of Object.keys(total) as (keyof PendingCounts)[]) total[queue] += counted[queue];
      }
      for (const [queue, count] of Object.entries(total)) this.set({ queue }, count);
    },
  });
  return known;
}

/**
 * The scheduler's metrics, with kube-scheduler's names and labels: scheduler_schedule_attempts_total and
 * scheduler_scheduling_attempt_duration_seconds by `result` and `profile`, scheduler_pod_scheduling_sli_duration_seconds
 * by `attempts`, and scheduler_pending_pods by `queue`, read from the queue at scrape time.
 */
export class SchedulerMetrics {
  private readonly attempts = new Map<string, { total: CounterSeries; duration: HistogramSeries }>();
  private readonly sli = new Map<number, HistogramSeries>();

  constructor(private readonly registry: Registry) {}

  /** One scheduling attempt of a pod of `profile` ended with `result`, `seconds` after it began (algorithm and binding). */
  attempt(result: AttemptResult, profile: string, seconds: number): void {
    const key = `${result}\u0000${profile}`;
    let series = this.attempts.get(key);
    if (!series) {
      const labelNames = ['result', 'profile'];
      const labels = { result, profile };
      series = {
        total: seriesCounter(this.registry, {
          name: 'scheduler_schedule_attempts_total',
          help: 'Scheduling attempts by result (scheduled, unschedulable: fits no node, error: the scheduler failed) and profile.',
          labelNames,
        }).series(labels),
        duration: seriesHistogram(this.registry, {
          name: 'scheduler_scheduling_attempt_duration_seconds',
          help: 'Seconds one scheduling attempt took, filtering, scoring and binding included, by result and profile.',
          labelNames,
          buckets: ATTEMPT_BUCKETS,
        }).series(labels),
      };
      this.attempts.set(key, series);
    }
    series.total.inc();
    series.duration.observe(seconds);
  }

  /** A pod was bound after `attempts` attempts, `seconds` after it first entered the queue. */
  scheduled(attempts: number, seconds: number): void {
    let series = this.sli.get(attempts);
    if (!series) {
      series = seriesHistogram(this.registry, {
        name: 'scheduler_pod_scheduling_sli_duration_seconds',
        help: 'Seconds from a pod entering the scheduling queue to its binding, over all its attempts.',
        labelNames: ['attempts'],
        buckets: SLI_BUCKETS,
      }).series({ attempts: String(attempts) });
      this.sli.set(attempts, series);
    }
    series.observe(seconds);
  }

  /** Reports `counts` in scheduler_pending_pods at every scrape; returns the function that stops. */
  pending(counts: () => PendingCounts): () => void {
    const queues = pendingGauge(this.registry);
    queues.add(counts);
    return () => queues.delete(counts);
  }
}
