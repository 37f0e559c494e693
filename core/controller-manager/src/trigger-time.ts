import type { Pod, Service } from '@skiff/api';

interface ServiceState {
  /** The trigger time of each pod (by name) at the last sync. */
  pods: Map<string, number>;
  service: number;
}

const parse = (time: string | null | undefined): number => (time ? Date.parse(time) || 0 : 0);

/** When a pod last changed in a way endpoints show: the transition time of its Ready condition. */
function podTriggerTime(pod: Pod): number {
  return parse(pod.status?.conditions?.find((condition) => condition.type === 'Ready')?.lastTransitionTime);
}

/**
 * Go's RFC3339Nano in UTC, the `endpoints.kubernetes.io/last-change-trigger-time` format: the fraction of a
 * second only when there is one, without trailing zeros.
 */
export function formatTriggerTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d*?)0*Z$/, (_match, digits: string) => (digits ? `.${digits}Z` : 'Z'));
}

/**
 * The value of `endpoints.kubernetes.io/last-change-trigger-time`, as kube-controller-manager computes it:
 * the earliest time among the changes not yet reflected — pods whose Ready condition moved since the last
 * sync of their Service — or the Service's creation when the Service is new to this controller. Latency
 * monitors subtract it from the time the endpoints are seen to change.
 */
export class TriggerTimeTracker {
  private readonly states = new Map<string, ServiceState>();

  /**
   * Records the current state of `service` (key `namespace/name`) and its pods and returns the trigger
   * time to publish, formatted, or `undefined` when nothing changed that has a time.
   */
  compute(key: string, service: Service, pods: readonly Pod[]): string | undefined {
    const previous = this.states.get(key);
    const next: ServiceState = { pods: new Map(), service: parse(service.metadata.creationTimestamp) };
    let earliest = Infinity;
    for (const pod of pods) {
      const time = podTriggerTime(pod);
      if (time === 0) continue;
      next.pods.set(pod.metadata.name!, time);
      if (time > (previous?.pods.get(pod.metadata.name!) ?? 0)) earliest = Math.min(earliest, time);
    }
    if (next.service > (previous?.service ?? 0)) earliest = Math.min(earliest, next.service);
    this.states.set(key, next);
    if (!previous) return next.service ? formatTriggerTime(next.service) : undefined;
    return Number.isFinite(earliest) ? formatTriggerTime(earliest) : undefined;
  }

  /** Forgets a Service that is gone. */
  forget(key: string): void {
    this.states.delete(key);
  }
}
