// coordination.k8s.io/v1: leases.
import { defineKind, RESOURCES, type Lease, type LeaseSpec, type ResourceDefinition, type StatusCause } from '@skiff/api';
import { fieldErrors, nameIsDNSSubdomain, validateNonnegative, validateObjectMeta, validateObjectMetaUpdate } from '@skiff/api/validation';
import { AGE_COLUMN, column } from './columns.js';

/** A positive duration, a non-negative transition count, and a preferred holder only under a strategy. */
export function validateLease(lease: Lease, old?: Lease): StatusCause[] {
  const causes = validateObjectMeta(lease.metadata, { namespaced: true, name: nameIsDNSSubdomain });
  const spec: LeaseSpec = lease.spec ?? {};
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0) {
    causes.push(fieldErrors.invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  causes.push(...validateNonnegative(spec.leaseTransitions, 'spec.leaseTransitions'));
  if (spec.preferredHolder && !spec.strategy) causes.push(fieldErrors.forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  if (old) causes.push(...validateObjectMetaUpdate(lease.metadata, old.metadata));
  return causes;
}

export const leases = defineKind<Lease>({
  ...{},
  ...RESOURCES.leases,
  columns: [column('Holder', '.spec.holderIdentity'), AGE_COLUMN],
  strategy: { validateAll: validateLease },
});

export const COORDINATION_KINDS: ResourceDefinition[] = [leases];
