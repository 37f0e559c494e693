import { formatQuantity, type Node, type Pod } from '@skiff/api';
import type { PodResourceUsage, UsageFigures } from '@skiff/kernel';
import { METRICS_GROUP, METRICS_VERSION } from './names.js';

const API_VERSION = `${METRICS_GROUP}/${METRICS_VERSION}`;

/** metrics.k8s.io/v1beta1 usage: CPU and memory as quantities. */
export interface ResourceUsage {
  cpu: string;
  memory: string;
}

export interface NodeMetrics {
  kind: 'NodeMetrics';
  apiVersion: string;
  metadata: { name: string; creationTimestamp: string; labels?: Record<string, string> };
  timestamp: string;
  window: string;
  usage: ResourceUsage;
}

export interface PodMetrics {
  kind: 'PodMetrics';
  apiVersion: string;
  metadata: { name: string; namespace: string; creationTimestamp: string; labels?: Record<string, string> };
  timestamp: string;
  window: string;
  containers: { name: string; usage: ResourceUsage }[];
}

/**
 * A duration as Go's time.Duration prints it, which is what the API's `window` holds: "15s", "10.5s", "1m0.25s",
 * "500ms"; to the millisecond.
 */
export function goDuration(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const rest = (ms % 60_000) / 1000;
  const secondsText = `${Number.isInteger(rest) ? rest : rest.toFixed(3).replace(/0+$/, '')}s`;
  if (hours) return `${hours}h${minutes}m${secondsText}`;
  if (minutes) return `${minutes}m${secondsText}`;
  return secondsText;
}

/** CPU in nanocores and memory in bytes as canonical quantities ("250m", "123456789n"; "4Mi", "12345Ki"). */
export function usageQuantities(figures: Pick<UsageFigures, 'cpuNanoCores' | 'memoryWorkingSetBytes'>): ResourceUsage {
  return {
    cpu: formatQuantity(`${Math.max(0, Math.round(figures.cpuNanoCores))}n`),
    memory: formatQuantity(`${Math.max(0, Math.round(figures.memoryWorkingSetBytes))}`, 'BinarySI'),
  };
}

/** RFC 3339 to the second, as the API writes metadata times. */
function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The window of figures that do not say theirs (a remote kubelet's Summary): the resolution they are kept for. */
function windowOf(figures: UsageFigures, fallbackSeconds: number): string {
  return goDuration(figures.windowSeconds ?? fallbackSeconds);
}

export function nodeMetrics(node: Node, figures: UsageFigures, fallbackWindowSeconds: number): NodeMetrics {
  const labels = node.metadata.labels;
  return {
    kind: 'NodeMetrics',
    apiVersion: API_VERSION,
    metadata: { name: node.metadata.name ?? '', creationTimestamp: now(), ...(labels ? { labels: { ...labels } } : {}) },
    timestamp: figures.timestamp,
    window: windowOf(figures, fallbackWindowSeconds),
    usage: usageQuantities(figures),
  };
}

/**
 * A pod's metrics from its kubelet's figures: every container in the pod's spec must have figures (a pod whose
 * containers are not all measured yet is left out, as upstream's metrics-server does); the oldest timestamp and the
 * widest window of its containers stand for the pod.
 */
export function podMetrics(pod: Pod, usage: PodResourceUsage, fallbackWindowSeconds: number): PodMetrics | undefined {
  const byName = new Map(usage.containers.map((container) => [container.name, container]));
  const names = (pod.spec?.containers ?? []).map((container) => container.name);
  const measured = names.map((name) => byName.get(name));
  if (!measured.length || measured.some((figures) => figures === undefined)) return undefined;
  const figures = measured as (UsageFigures & { name: string })[];
  const timestamp = figures.map((f) => f.timestamp).reduce((a, b) => (a < b ? a : b));
  const window = Math.max(...figures.map((f) => f.windowSeconds ?? fallbackWindowSeconds));
  const labels = pod.metadata.labels;
  return {
    kind: 'PodMetrics',
    apiVersion: API_VERSION,
    metadata: {
      name: pod.metadata.name ?? '',
      namespace: pod.metadata.namespace ?? '',
      creationTimestamp: now(),
      ...(labels ? { labels: { ...labels } } : {}),
    },
    timestamp,
    window: goDuration(window),
    containers: figures.map((f) => ({ name: f.name, usage: usageQuantities(f) })),
  };
}

/** The APIResourceList of /apis/metrics.k8s.io/v1beta1. */
export const RESOURCES = [
  { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
  { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
];

export function apiResourceList() {
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: API_VERSION, resources: RESOURCES };
}
