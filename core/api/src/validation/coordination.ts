import type { Lease, StatusCause } from '../types.js';
import { forbidden, invalid, NEGATIVE_MESSAGE } from './field.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './meta.js';
import { nameIsDNSSubdomain } from './names.js';

/** coordination.k8s.io/v1 Lease: a positive duration, a non-negative transition count. */
export function validateLease(lease: Lease, old?: Lease): StatusCause[] {
  const causes = validateObjectMeta(lease.metadata, { namespaced: true, name: nameIsDNSSubdomain });
  const spec = (lease.spec ?? {}) as Lease['spec'] & { strategy?: string; preferredHolder?: string };
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0) {
    causes.push(invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0) {
    causes.push(invalid('spec.leaseTransitions', spec.leaseTransitions, NEGATIVE_MESSAGE));
  }
  if (spec.preferredHolder && !spec.strategy) causes.push(forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  if (old) causes.push(...validateObjectMetaUpdate(lease.metadata, old.metadata));
  return causes;
}
