import type { KubeObject } from '@skiff/api';

/**
 * A field selector reader. Kubernetes compares the field's string form, and an unset field reads as
 * "" (so `spec.nodeName=` selects unscheduled pods) and an unset boolean as "false".
 */
export function selectorField<T extends KubeObject>(read: (object: T) => string | number | boolean | undefined) {
  return (object: T): string => String(read(object) ?? '');
}
