import { isApiError } from '@skiff/api';

/**
 * A create refused because the namespace is being deleted: it will keep failing, so the work is dropped
 * rather than retried. Kubernetes marks it with a `NamespaceTerminating` cause; Skiff's namespace-lifecycle
 * admission says so in its message.
 */
export function isNamespaceTerminating(err: unknown): boolean {
  if (!isApiError(err, 'Forbidden')) return false;
  return (err.details?.causes ?? []).some((cause) => cause.type === 'NamespaceTerminating') || err.message.includes('because it is being terminated');
}
