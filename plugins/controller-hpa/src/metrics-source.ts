import { parseCpuMillis, type KubeObject, type Quantity, type ResourceType } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';

/** One pod's usage as the resource metrics API reports it: per container, each resource in milli-units. */
export interface PodUsage {
  pod: string;
  /** When the sample was taken (epoch ms). */
  timestamp: number;
  /** The span the sample averages over (ms). */
  windowMs: number;
  containers: ReadonlyArray<{ name: string; usage: Readonly<Record<string, number>> }>;
}

/**
 * Where the controller reads pod usage from. The default reads metrics.k8s.io through the API server; a test
 * or another plugin can hand the controller its own.
 */
export interface PodMetricsSource {
  /** The usage of the pods in `namespace` that `selector` (label selector text) selects. */
  podMetrics(namespace: string, selector: string): Promise<PodUsage[]>;
}

/** metrics.k8s.io/v1beta1 PodMetrics, as metrics-server serves it (not one of the stored kinds). */
export interface PodMetrics extends KubeObject {
  timestamp: string;
  window: string;
  containers: Array<{ name: string; usage: Record<string, Quantity> }>;
}

export const POD_METRICS: ResourceType = Object.freeze({
  group: 'metrics.k8s.io',
  version: 'v1beta1',
  resource: 'pods',
  kind: 'PodMetrics',
  namespaced: true,
});

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, µs: 1e-3, ns: 1e-6 };

/** A Go duration string (`15.002s`, `1m0s`, `500ms`) in milliseconds; NaN when it is not one. */
export function parseGoDuration(text: string): number {
  const parts = /^(\d+(?:\.\d*)?(?:h|ms|m|s|us|µs|ns))+$/.test(text) ? text.match(/\d+(?:\.\d*)?(?:h|ms|m|s|us|µs|ns)/g)! : undefined;
  if (!parts) return text === '0' ? 0 : Number.NaN;
  let total = 0;
  for (const part of parts) {
    const [, amount, unit] = /^(\d+(?:\.\d*)?)(.+)$/.exec(part)!;
    total += Number(amount) * DURATION_UNITS_MS[unit!]!;
  }
  return total;
}

/** A PodMetrics object as the controller uses it; quantities in milli-units (cores → millicores, bytes → millibytes). */
export function podUsageOf(metrics: PodMetrics): PodUsage {
  return {
    pod: metrics.metadata.name!,
    timestamp: Date.parse(metrics.timestamp),
    windowMs: parseGoDuration(metrics.window),
    containers: (metrics.containers ?? []).map((container) => ({
      name: container.name,
      usage: Object.fromEntries(Object.entries(container.usage ?? {}).map(([resource, quantity]) => [resource, parseCpuMillis(quantity)])),
    })),
  };
}

/** Reads PodMetrics from the metrics.k8s.io API through the ordinary client (served by @skiff/plugin-metrics-server). */
export class ApiPodMetricsSource implements PodMetricsSource {
  constructor(private readonly client: Pick<ApiClient, 'list'>) {}

  async podMetrics(namespace: string, selector: string): Promise<PodUsage[]> {
    const list = await this.client.list<PodMetrics>(POD_METRICS, namespace, { labelSelector: selector });
    return list.items.map(podUsageOf);
  }
}
