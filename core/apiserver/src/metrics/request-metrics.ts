import {
  gauge,
  seriesCounter,
  seriesHistogram,
  type CounterSeries,
  type HistogramSeries,
  type Registry,
  type SeriesCounter,
  type SeriesHistogram,
} from '@skiff/kernel';
import type { ApiRequest, ApiResponse } from '@skiff/kernel';
import type { RequestInfo } from '../pipeline/request-info.js';
import { requestLabels, type RequestLabels } from './labels.js';

/** kube-apiserver's buckets for apiserver_request_duration_seconds (seconds). */
export const REQUEST_DURATION_BUCKETS: readonly number[] = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

const LABEL_NAMES = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

export interface RequestMetricsOptions {
  /** This thread's place among the API server's threads (0: the primary). */
  thread: number;
  /** Whether the server serves the request's resource: URLs it does not serve count as one series. */
  served(info: RequestInfo): boolean;
}

/**
 * The API server's request metrics: what it answered (apiserver_request_total), how long it took
 * (apiserver_request_duration_seconds), how many requests are in flight (apiserver_current_inflight_requests), and how
 * the requests spread over threads (skiff_apiserver_thread_requests_total). Per request: two counters of its own, one
 * labels object, and prom-client's work.
 */
export class RequestMetrics {
  private readonly total: SeriesCounter;
  private readonly duration: SeriesHistogram;
  /** The series of each label set seen, by a key of its label values. */
  private readonly series = new Map<string, RequestSeries>();
  private readonly threadRequests: CounterSeries;
  private readonly inflight = { readOnly: 0, mutating: 0 };
  /** The most in flight since the last scrape: kube-apiserver reports a recent high-water mark, not one instant. */
  private readonly highest = { readOnly: 0, mutating: 0 };

  constructor(
    registry: Registry,
    private readonly options: RequestMetricsOptions,
  ) {
    this.total = seriesCounter(registry, {
      name: 'apiserver_request_total',
      help: 'API requests answered, by verb, dry run, group, version, resource, subresource, scope, component and HTTP code.',
      labelNames: [...LABEL_NAMES, 'code'],
    });
    this.duration = seriesHistogram(registry, {
      name: 'apiserver_request_duration_seconds',
      help: 'Seconds from a request arriving to its answer, by verb, dry run, group, version, resource, subresource, scope and component.',
      labelNames: LABEL_NAMES,
      buckets: REQUEST_DURATION_BUCKETS,
    });
    const highest = this.highest;
    const inflight = this.inflight;
    gauge(registry, {
      name: 'apiserver_current_inflight_requests',
      help: 'Highest number of requests in flight since the last scrape, read-only and mutating apart.',
      labelNames: ['request_kind'],
      collect() {
        this.set({ request_kind: 'readOnly' }, highest.readOnly);
        this.set({ request_kind: 'mutating' }, highest.mutating);
        highest.readOnly = inflight.readOnly;
        highest.mutating = inflight.mutating;
      },
    });
    this.threadRequests = seriesCounter(registry, {
      name: 'skiff_apiserver_thread_requests_total',
      help: 'Requests each API server thread answered (0: the primary thread; see apiServer.workers).',
      labelNames: ['thread'],
    }).series({ thread: String(options.thread) });
  }

  /** Call as the request starts; pass what it returns to `end`. */
  begin(request: ApiRequest): number {
    if (isReadOnly(request.method)) {
      if (++this.inflight.readOnly > this.highest.readOnly) this.highest.readOnly = this.inflight.readOnly;
    } else if (++this.inflight.mutating > this.highest.mutating) this.highest.mutating = this.inflight.mutating;
    return performance.now();
  }

  /**
   * Records the answer. A streamed answer (a watch, a list sent in chunks, logs) counts when its stream ends, as
   * kube-apiserver counts a WATCH; it stops being in flight at once (a long-running request holds no seat).
   */
  end(request: ApiRequest, info: RequestInfo | undefined, response: ApiResponse, started: number): ApiResponse {
    if (isReadOnly(request.method)) this.inflight.readOnly--;
    else this.inflight.mutating--;
    this.threadRequests.inc();
    const known = info === undefined ? false : info.isResourceRequest ? this.options.served(info) : response.status !== 404;
    const series = this.seriesOf(requestLabels(request.method, info, request.query.dryRun, request.headers['content-type'], known));
    if (response.stream) return { ...{}, ...response, stream: this.recordedAtEnd(response.stream, series, response.status, started) };
    if (response.textStream) return { ...{}, ...response, textStream: this.recordedAtEnd(response.textStream, series, response.status, started) };
    this.record(series, response.status, started);
    return response;
  }

  private seriesOf(labels: RequestLabels): RequestSeries {
    const key = `${labels.verb} ${labels.dry_run} ${labels.group} ${labels.version} ${labels.resource} ${labels.subresource} ${labels.scope}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels, duration: this.duration.series(labels as unknown as Record<string, string>), codes: new Map() };
      this.series.set(key, series);
    }
    return series;
  }

  private record(series: RequestSeries, status: number, started: number): void {
    series.duration.observe((performance.now() - started) / 1000);
    let total = series.codes.get(status);
    if (!total) series.codes.set(status, (total = this.total.series({ ...{}, ...series.labels, code: String(status) })));
    total.inc();
  }

  private async *recordedAtEnd<T>(stream: AsyncIterable<T>, series: RequestSeries, status: number, started: number): AsyncGenerator<T> {
    try {
      yield* stream;
    } finally {
      this.record(series, status, started);
    }
  }
}

interface RequestSeries {
  labels: RequestLabels;
  duration: HistogramSeries;
  codes: Map<number, CounterSeries>;
}

function isReadOnly(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}
