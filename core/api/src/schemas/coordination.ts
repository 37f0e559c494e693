import { objectsIn, t } from './language.js';
import { objectMetaSchema, typeMetaFields } from './meta.js';

const object = objectsIn('io.k8s.api.coordination.v1');

export const leaseSchema = object(
  'Lease',
  {
    ...typeMetaFields,
    metadata: objectMetaSchema,
    spec: object(
      'LeaseSpec',
      {
        holderIdentity: t.string('holderIdentity contains the identity of the holder of a current lease.'),
        leaseDurationSeconds: t.int32('leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it.'),
        acquireTime: t.time('acquireTime is a time when the current lease was acquired.'),
        renewTime: t.time('renewTime is a time when the current holder of a lease has last updated the lease.'),
        leaseTransitions: t.int32('leaseTransitions is the number of transitions of a lease between holders.'),
        strategy: t.string('Strategy indicates the strategy for picking the leader for coordinated leader election.'),
        preferredHolder: t.string('PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up.'),
      },
      'LeaseSpec is a specification of a Lease.',
    ),
  },
  'Lease defines a lease concept.',
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' },
);
