import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  exponentialBuckets,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';
import type { MessagePort } from 'node:worker_threads';
import { answerCalls, PortCalls, type KernelThreads } from './threads.js';

/**
 * Prometheus metrics (prom-client). Each kernel owns one `Registry`, the `metrics` component; never prom-client's
 * global registry, since tests run several kernels in one process. Components create their metrics with the
 * get-or-create helpers below, so two components (or two starts of one) asking for the same name share it.
 */
export { Counter, Gauge, Histogram, Registry, exponentialBuckets };
export type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration };

/** A registry's metrics as plain data (`registry.getMetricsAsJSON()`): what crosses threads to be aggregated. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** Where more metrics come from when the registry is scraped: another registry, another thread. */
export type MetricsSource = () => Promise<MetricsSnapshot>;

/** The Prometheus text format the registry writes (version 0.0.4). */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** The name of the channel over which the primary thread gathers the API server worker threads' metrics. */
const THREAD_CHANNEL = '@skiff/kernel/metrics';
/** The name of the channel over which a worker thread asks the primary for every thread's metrics. */
const GATHER_CHANNEL = '@skiff/kernel/metrics/gather';

const sources = new WeakMap<Registry, Set<MetricsSource>>();
/** How long the first gather waits for the event-loop monitor it has just started. */
const FIRST_SAMPLES_MS = 50;
/** Registries that report prom-client's default metrics once first gathered. */
const wantsDefaults = new WeakSet<Registry>();

/**
 * A kernel's registry. With `defaultMetrics` it also reports process_* and nodejs_* (prom-client's defaults), from
 * its first `gatherMetrics` on: their event-loop monitor and GC observer cannot be stopped, so a kernel nobody scrapes
 * (most test kernels) never starts them. A worker thread's kernel leaves them to the primary, whose process_* already
 * cover the whole process.
 */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) wantsDefaults.add(registry);
  return registry;
}

function existing<M>(registry: Registry, name: string, type: abstract new (...args: never[]) => M): M | undefined {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  if (!(metric instanceof type)) throw new Error(`metric "${name}" is already registered with another type`);
  return metric;
}

/** The registry's counter `config.name`, created on first use. */
export function counter<L extends string>(registry: Registry, config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
  return existing<Counter<L>>(registry, config.name, Counter) ?? new Counter({ ...{}, ...config, registers: [registry] });
}

/** The registry's gauge `config.name`, created on first use (a `collect` given later is not used). */
export function gauge<L extends string>(registry: Registry, config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
  return existing<Gauge<L>>(registry, config.name, Gauge) ?? new Gauge({ ...{}, ...config, registers: [registry] });
}

/** The registry's histogram `config.name`, created on first use. */
export function histogram<L extends string>(registry: Registry, config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L> {
  return existing<Histogram<L>>(registry, config.name, Histogram) ?? new Histogram({ ...{}, ...config, registers: [registry] });
}

/**
 * Adds `source` to what `gatherMetrics(registry)` reports (a kubelet's own registry, a worker thread's); returns the
 * function that removes it.
 */
export function addMetricsSource(registry: Registry, source: MetricsSource): () => void {
  let set = sources.get(registry);
  if (!set) sources.set(registry, (set = new Set()));
  set.add(source);
  return () => set.delete(source);
}

/**
 * The registry's metrics and those of every source added to it, aggregated as prom-client aggregates a cluster's
 * workers: series with equal labels are summed (or kept once, by each metric's `aggregator`), others kept apart.
 * A source that fails or is slow is left out of this scrape. On an API server worker thread: every thread's metrics,
 * gathered by the primary.
 */
export async function gatherMetrics(registry: Registry): Promise<Registry> {
  const primary = gatheredByPrimary.get(registry);
  if (primary) return AggregatorRegistry.aggregate([await primary()]);
  if (wantsDefaults.delete(registry)) {
    collectDefaultMetrics({ register: registry });
    // The event-loop monitor needs a few of its 10 ms samples before its mean is a number rather than NaN.
    await new Promise((resolve) => setTimeout(resolve, FIRST_SAMPLES_MS));
  }
  const extra = [...(sources.get(registry) ?? [])];
  if (extra.length === 0) return registry;
  const snapshots = await Promise.all([registry.getMetricsAsJSON(), ...extra.map(withinDeadline)]);
  return AggregatorRegistry.aggregate(snapshots);
}

/** How long a scrape waits for one source (a busy worker thread) before leaving it out. */
const SOURCE_DEADLINE_MS = 2_000;

function withinDeadline(source: MetricsSource): Promise<MetricsSnapshot> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<MetricsSnapshot>((resolve) => {
    timer = setTimeout(() => resolve([]), SOURCE_DEADLINE_MS);
    timer.unref();
  });
  return Promise.race([source().catch(() => [] as MetricsSnapshot), late]).finally(() => clearTimeout(timer));
}

/** On a worker thread's registry: how to gather the whole process's metrics from the primary. */
const gatheredByPrimary = new WeakMap<Registry, () => Promise<MetricsSnapshot>>();

/**
 * Wires a kernel's registry across the API server's threads, over two channels: on one the primary asks each worker
 * for its own metrics at every scrape; on the other a worker that was scraped asks the primary for everyone's, so a
 * scrape shows the whole process whichever thread accepted it.
 */
export function shareMetricsAcrossThreads(threads: KernelThreads, registry: Registry): void {
  if (threads.primary) {
    threads.serve(THREAD_CHANNEL, (port: MessagePort) => {
      const calls = new PortCalls<string>(port, (message) => new Error(message));
      const remove = addMetricsSource(registry, () => calls.call({}) as Promise<MetricsSnapshot>);
      // A worker thread that ended (and was started again on a new channel) is no longer asked.
      port.once('close', remove);
    });
    threads.serve(GATHER_CHANNEL, (port: MessagePort) => {
      answerCalls(
        port,
        async () => (await gatherMetrics(registry)).getMetricsAsJSON(),
        (err) => String(err),
      );
    });
    return;
  }
  const own = threads.port(THREAD_CHANNEL);
  if (own)
    answerCalls(
      own,
      () => registry.getMetricsAsJSON(),
      (err) => String(err),
    );
  const gather = threads.port(GATHER_CHANNEL);
  if (gather) {
    const calls = new PortCalls<string>(gather, (message) => new Error(message));
    gatheredByPrimary.set(registry, () => calls.call({}) as Promise<MetricsSnapshot>);
  }
}

/** One series of a `SeriesHistogram`: observing is a bucket search and three additions. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    if (i < bounds.length) this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** One series of a `SeriesCounter`. */
export class CounterSeries {
  value = 0;

  constructor(readonly labels: Readonly<Record<string, string>>) {}

  inc(by = 1): void {
    this.value += by;
  }
}

interface SeriesMetricConfig {
  name: string;
  help: string;
  labelNames: readonly string[];
}

/**
 * Metrics for hot paths (every API request, every store call): the caller keeps each series it uses (by its own key)
 * and updates plain numbers; labels are only turned into text when scraped. prom-client's own metrics validate and
 * hash their labels on every update, which costs microseconds per request. Registered like any prom-client metric,
 * so scrapes and thread aggregation treat them alike.
 */
abstract class SeriesMetric<S extends { labels: Readonly<Record<string, string>> }> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly aggregator = 'sum';
  protected readonly all: S[] = [];
  private readonly byLabels = new Map<string, S>();

  constructor(config: SeriesMetricConfig) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
  }

  /** The series with these labels, made on first use (keep it: finding it costs a lookup). */
  series(labels: Readonly<Record<string, string>>): S {
    const key = JSON.stringify(this.labelNames.map((name) => labels[name]));
    let series = this.byLabels.get(key);
    if (!series) {
      series = this.create(labels);
      this.byLabels.set(key, series);
      this.all.push(series);
    }
    return series;
  }

  reset(): void {
    this.all.length = 0;
    this.byLabels.clear();
  }

  protected abstract create(labels: Readonly<Record<string, string>>): S;
}

export class SeriesHistogram extends SeriesMetric<HistogramSeries> {
  readonly type = 'histogram';
  readonly buckets: readonly number[];

  constructor(config: SeriesMetricConfig & { buckets: readonly number[] }) {
    super(config);
    this.buckets = [...config.buckets].sort((a, b) => a - b);
  }

  protected create(labels: Readonly<Record<string, string>>): HistogramSeries {
    return new HistogramSeries(labels, this.buckets);
  }

  async get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    const values: MetricValue<string>[] = [];
    for (const series of this.all) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += series.counts[i]!;
        values.push({ labels: { ...{}, ...series.labels, le: this.buckets[i]! }, value: cumulative, metricName: `${this.name}_bucket` } as MetricValue<string>);
      }
      values.push({ labels: { ...{}, ...series.labels, le: '+Inf' }, value: series.count, metricName: `${this.name}_bucket` } as MetricValue<string>);
      values.push({ labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` } as MetricValue<string>);
      values.push({ labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` } as MetricValue<string>);
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: this.aggregator } as unknown as MetricObjectWithValues<
      MetricValue<string>
    >;
  }
}

export class SeriesCounter extends SeriesMetric<CounterSeries> {
  readonly type = 'counter';

  protected create(labels: Readonly<Record<string, string>>): CounterSeries {
    return new CounterSeries(labels);
  }

  async get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    const values = this.all.map((series) => ({ labels: { ...series.labels }, value: series.value }));
    return { name: this.name, help: this.help, type: 'counter', values, aggregator: this.aggregator } as unknown as MetricObjectWithValues<MetricValue<string>>;
  }
}

function existingOrRegistered<M>(registry: Registry, name: string, type: abstract new (...args: never[]) => M, make: () => M): M {
  const found = existing<M>(registry, name, type);
  if (found) return found;
  const made = make();
  registry.registerMetric(made as never);
  return made;
}

/** The registry's hot-path histogram `config.name`, created on first use. */
export function seriesHistogram(registry: Registry, config: SeriesMetricConfig & { buckets: readonly number[] }): SeriesHistogram {
  return existingOrRegistered(registry, config.name, SeriesHistogram, () => new SeriesHistogram(config));
}

/** The registry's hot-path counter `config.name`, created on first use. */
export function seriesCounter(registry: Registry, config: SeriesMetricConfig): SeriesCounter {
  return existingOrRegistered(registry, config.name, SeriesCounter, () => new SeriesCounter(config));
}
