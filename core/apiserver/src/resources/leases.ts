import { leaseSchema, validateLease, type KubeObject, type Lease } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { age, AGE_COLUMN, column, NAME_COLUMN } from './columns.js';
import { ALL_VERBS, decoderFor } from './lifecycle.js';

export const leases: ResourceDefinition = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  resource: 'leases',
  singular: 'lease',
  namespaced: true,
  verbs: ALL_VERBS,
  decode: decoderFor(leaseSchema),
  validate: (object, old) => validateLease(object as Lease, old as Lease | undefined),
  table: {
    columns: [NAME_COLUMN, column('Holder', 'holderIdentity contains the identity of the holder of a current lease.'), AGE_COLUMN],
    cells: (object: KubeObject, now: number) => [object.metadata.name, (object as Lease).spec?.holderIdentity ?? '', age(object, now)],
  },
};
