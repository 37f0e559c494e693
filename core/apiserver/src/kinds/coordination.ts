// coordination.k8s.io/v1: leases.
import { defineKind, validateLease, type Lease, type ResourceDefinition } from '@skiff/api';
import { AGE_COLUMN, column } from './columns.js';

export const leases = defineKind({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  resource: 'leases',
  namespaced: true,
  columns: [column('Holder', '.spec.holderIdentity'), AGE_COLUMN],
  strategy: { validateAll: (object, old) => validateLease(object as Lease, old as Lease | undefined) },
});

export const COORDINATION_KINDS: ResourceDefinition[] = [leases];
