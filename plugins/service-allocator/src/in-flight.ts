import type { KubeObject } from '@skiff/api';
import type { AuditEvent } from '@skiff/kernel';

const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Counts the writes to Services in flight, per namespace, from the audit events the API server emits
 * around every request (the one signal the kernel gives when a request has finished, whatever its outcome).
 * When the last write in a namespace finishes, `quiet` is called with it; a write across all namespaces
 * counts under "". The Service a successful write answers is handed to `written` first.
 */
export class ServiceWritesInFlight {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly quiet: (namespace: string) => void,
    /** A write succeeded and answered the Service as stored. */
    private readonly written: (service: KubeObject) => void = () => undefined,
  ) {}

  observe(event: AuditEvent): void {
    const ref = event.objectRef;
    if (!ref || ref.resource !== 'services' || (ref.apiGroup ?? '') !== '' || ref.subresource || !WRITES.has(event.verb)) return;
    const namespace = ref.namespace ?? '';
    const count = this.counts.get(namespace) ?? 0;
    if (event.stage === 'RequestReceived') {
      this.counts.set(namespace, count + 1);
      return;
    }
    const stored = event.requestObject;
    if (stored?.kind === 'Service' && (event.responseStatus?.code ?? 500) < 300) this.written(stored);
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
