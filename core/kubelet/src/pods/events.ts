/** Records one event about the pod being synced (bound to the pod by the caller). */
export type PodEventSink = (type: 'Normal' | 'Warning', reason: string, message: string) => void;

/** Go's duration format, as Kubernetes messages print it: "850ms", "1.204s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return `${Number((ms / 1000).toFixed(3))}s`;
}
