import { randomBytes } from 'node:crypto';
import { isApiError, RESOURCES, type Event, type KubeObject, type ObjectReference } from '@skiff/api';
import type { ApiClient, EventRecorder, Logger } from '@skiff/kernel';
import { dropUndefined } from './drop-undefined.js';
import { silentLogger } from './silent-logger.js';

export interface EventRecorderOptions {
  /** `source.component` and `reportingComponent` of every event (e.g. `deployment-controller`). */
  component: string;
  /** `source.host` and `reportingInstance` (kubelets name their node). */
  host?: string;
  logger?: Logger;
}

/** Repeats of one event within this window bump the existing Event's count instead of creating another. */
const AGGREGATION_WINDOW_MS = 10 * 60_000;
/** Series remembered for aggregation; the least recently seen are forgotten first. */
const MAX_SERIES = 4096;

/** One Event object on the server and the repeats it stands for. */
interface Series {
  event: Event;
  lastSeenMs: number;
  /** The count the server has (so a burst of repeats costs one PATCH, not one each). */
  writtenCount: number;
  /** Writes of one series run in order: a repeat must not PATCH an Event whose create is still in flight. */
  tail: Promise<void>;
}

/**
 * Records core/v1 Events about objects, the way `kubectl describe` shows them. Fire-and-forget:
 * recording never throws to the caller and never blocks it; failures are logged.
 */
export class EventRecorderImpl implements EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly logger: Logger;
  /** Event names end in the time and a per-recorder counter from a random start: unique without a random read per event. */
  private sequence = randomBytes(4).readUInt32BE(0);

  constructor(
    private readonly client: ApiClient,
    private readonly options: EventRecorderOptions,
  ) {
    this.logger = (options.logger ?? silentLogger).child({ component: options.component, recorder: 'events' });
  }

  event(object: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const nowMs = Date.now();
    const key = seriesKey(object, type, reason, message);
    const known = this.series.get(key);
    const series = known && nowMs - known.lastSeenMs < AGGREGATION_WINDOW_MS ? known : this.newSeries(object, type, reason, message, nowMs);
    if (series === known) {
      series.event.count = (series.event.count ?? 1) + 1;
      series.event.lastTimestamp = timestamp(nowMs);
    }
    series.lastSeenMs = nowMs;
    this.remember(key, series);
    this.enqueue(series);
  }

  /** Resolves when every event recorded so far has been written (or has failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private newSeries(object: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string, nowMs: number): Series {
    const involvedObject = involvedObjectOf(object);
    const at = timestamp(nowMs);
    const event: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        // <object>.<unique suffix>, kept within the 253 characters a name may have.
        name: `${(involvedObject.name ?? 'unnamed').slice(0, 230)}.${nowMs.toString(16)}${this.nextSuffix()}`,
        // Cluster-scoped objects (nodes, namespaces) have no namespace of their own.
        namespace: involvedObject.namespace || 'default',
      },
      involvedObject,
      reason,
      message,
      type,
      source: dropUndefined({ component: this.options.component, host: this.options.host }),
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
      reportingComponent: this.options.component,
      ...(this.options.host ? { reportingInstance: this.options.host } : {}),
    };
    return { event, lastSeenMs: nowMs, writtenCount: 0, tail: Promise.resolve() };
  }

  private nextSuffix(): string {
    this.sequence = (this.sequence + 1) >>> 0;
    return this.sequence.toString(16).padStart(8, '0');
  }

  private remember(key: string, series: Series): void {
    this.series.delete(key);
    this.series.set(key, series);
    if (this.series.size > MAX_SERIES) this.series.delete(this.series.keys().next().value as string);
  }

  private enqueue(series: Series): void {
    const write = series.tail.then(() => this.write(series));
    series.tail = write;
    this.inFlight.add(write);
    void write.finally(() => this.inFlight.delete(write));
  }

  private async write(series: Series): Promise<void> {
    const { event } = series;
    const count = event.count ?? 1;
    if (series.writtenCount >= count) return;
    try {
      if (series.writtenCount === 0) {
        await this.client.create(RESOURCES.events, event);
      } else {
        try {
          await this.client.patch(
            RESOURCES.events,
            event.metadata.name as string,
            { count, lastTimestamp: event.lastTimestamp },
            {
              namespace: event.metadata.namespace,
              patchType: 'merge',
            },
          );
        } catch (err) {
          // The Event expired or was deleted meanwhile: start it over with the count so far.
          if (!isApiError(err, 'NotFound')) throw err;
          await this.client.create(RESOURCES.events, event);
        }
      }
      series.writtenCount = count;
    } catch (err) {
      this.logger.warn({ err, involvedObject: event.involvedObject, reason: event.reason }, 'could not record event');
    }
  }
}

function involvedObjectOf(object: KubeObject): ObjectReference {
  const { name, namespace, uid, resourceVersion } = object.metadata;
  return dropUndefined({ apiVersion: object.apiVersion, kind: object.kind, name, namespace, uid, resourceVersion });
}

function seriesKey(object: KubeObject, type: string, reason: string, message: string): string {
  const { namespace = '', name = '', uid = '' } = object.metadata;
  return JSON.stringify([object.kind ?? '', namespace, name, uid, type, reason, message]);
}

/** Event timestamps are RFC 3339 with whole seconds, like the ones Kubernetes writes. */
function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
