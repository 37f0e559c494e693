import type { KubeObject } from '@skiff/api';
import type { AdmissionOutcome } from '@skiff/kernel';

/**
 * Counts the writes to Services in flight, per namespace: a write begins when it reaches the allocator's
 * admission tap and ends when the API server has answered it (AdmissionRequest.onFinished), whatever the
 * outcome. When the last write in a namespace ends, `quiet` is called with it; a write across all namespaces
 * counts under "". The Service a successful write answered with is handed to `written` first.
 */
export class ServiceWritesInFlight {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly quiet: (namespace: string) => void,
    /** A write succeeded and answered the Service as stored. */
    private readonly written: (service: KubeObject) => void = () => undefined,
  ) {}

  begin(namespace: string): void {
    this.counts.set(namespace, (this.counts.get(namespace) ?? 0) + 1);
  }

  end(namespace: string, outcome: AdmissionOutcome): void {
    const stored = outcome.object;
    if (outcome.succeeded && stored?.kind === 'Service') this.written(stored);
    const count = this.counts.get(namespace) ?? 0;
    if (count <= 1) {
      this.counts.delete(namespace);
      this.quiet(namespace);
    } else {
      this.counts.set(namespace, count - 1);
    }
  }

  /** Whether writes to Services in `namespace` (or across all namespaces) are in flight. */
  busy(namespace: string): boolean {
    return this.counts.has(namespace) || this.counts.has('');
  }
}
