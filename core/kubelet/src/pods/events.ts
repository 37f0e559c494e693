/** Records one event about the pod being synced (bound to the pod by the caller). */
export type PodEventSink = (type: 'Normal' | 'Warning', reason: string, message: string) => void;

/** Go's duration format (millisecond precision), as Kubernetes messages print it: "850ms", "1.204s", "1m20s", "5m0s", "1h0m0s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const totalMs = Math.round(ms);
  const hours = Math.floor(totalMs / 3_600_000);
  const minutes = Math.floor((totalMs % 3_600_000) / 60_000);
  const seconds = `${Number(((totalMs % 60_000) / 1000).toFixed(3))}s`;
  if (hours) return `${hours}h${minutes}m${seconds}`;
  if (minutes) return `${minutes}m${seconds}`;
  return seconds;
}

/** A pod as Kubernetes' messages name it: `<name>_<namespace>(<uid>)`. */
export function podDescription(metadata: { name?: string; namespace?: string; uid?: string }): string {
  return `${metadata.name}_${metadata.namespace}(${metadata.uid})`;
}
