// PersistentVolumes and the PersistentVolumeClaims that bind them.
import { defineKind, RESOURCES, type PersistentVolume, type PersistentVolumeClaim, type PersistentVolumeSpec, type StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from '../columns.js';

const ACCESS_MODE_SHORT: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
const accessModes = (modes: string[] | undefined) => (modes ?? []).map((mode) => ACCESS_MODE_SHORT[mode] ?? mode).join(',');

function validateClaim(claim: PersistentVolumeClaim, old?: PersistentVolumeClaim): StatusCause[] {
  const causes: StatusCause[] = [];
  if (!claim.spec?.accessModes?.length) causes.push(fieldErrors.required('spec.accessModes', 'at least 1 access mode is required'));
  if (!claim.spec?.resources?.requests?.storage) causes.push(fieldErrors.required('spec.resources[storage]'));
  if (old) {
    // Only the requested size (to grow), the volume attributes class and a first binding may change.
    const strip = (c: PersistentVolumeClaim) => ({
      ...{},
      ...c.spec,
      resources: undefined,
      volumeAttributesClassName: undefined,
      volumeName: c.spec?.volumeName || undefined,
    });
    const before = strip(old);
    const after = strip(claim);
    if (!old.spec?.volumeName) {
      delete after.volumeName;
      delete before.volumeName;
    }
    if (JSON.stringify(after) !== JSON.stringify(before))
      causes.push(fieldErrors.forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
  }
  return causes;
}

export const persistentVolumeClaims = defineKind<PersistentVolumeClaim>({
  ...{},
  ...RESOURCES.persistentvolumeclaims,
  subresources: ['status'],
  columns: [
    computed<PersistentVolumeClaim>('Status', (c) => c.status?.phase ?? ''),
    computed<PersistentVolumeClaim>('Volume', (c) => c.spec?.volumeName ?? ''),
    computed<PersistentVolumeClaim>('Capacity', (c) => c.status?.capacity?.storage ?? ''),
    computed<PersistentVolumeClaim>('Access Modes', (c) => accessModes(c.status?.accessModes)),
    computed<PersistentVolumeClaim>('StorageClass', (c) => c.spec?.storageClassName ?? '<unset>'),
    computed<PersistentVolumeClaim>('VolumeAttributesClass', (c) => c.spec?.volumeAttributesClassName ?? '<unset>'),
    AGE_COLUMN,
    computed<PersistentVolumeClaim>('VolumeMode', (c) => c.spec?.volumeMode ?? 'Filesystem', { priority: 1 }),
  ],
  strategy: {
    defaults(claim) {
      if (claim.spec) claim.spec.volumeMode ??= 'Filesystem';
    },
    prepareForCreate(claim) {
      claim.status = { phase: 'Pending' };
    },
    validate: validateClaim,
  },
});

/** The volume sources a PersistentVolume may name; it names exactly one. */
const PV_SOURCES = [
  'hostPath',
  'local',
  'nfs',
  'csi',
  'iscsi',
  'fc',
  'rbd',
  'cephfs',
  'cinder',
  'glusterfs',
  'flexVolume',
  'azureFile',
  'azureDisk',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'quobyte',
  'flocker',
  'gcePersistentDisk',
  'awsElasticBlockStore',
] as const satisfies readonly (keyof PersistentVolumeSpec)[];

export const persistentVolumes = defineKind<PersistentVolume>({
  ...{},
  ...RESOURCES.persistentvolumes,
  subresources: ['status'],
  columns: [
    computed<PersistentVolume>('Capacity', (v) => v.spec?.capacity?.storage ?? ''),
    computed<PersistentVolume>('Access Modes', (v) => accessModes(v.spec?.accessModes)),
    computed<PersistentVolume>('Reclaim Policy', (v) => v.spec?.persistentVolumeReclaimPolicy ?? ''),
    computed<PersistentVolume>('Status', (v) => v.status?.phase ?? ''),
    computed<PersistentVolume>('Claim', (v) => (v.spec?.claimRef?.name ? `${v.spec.claimRef.namespace}/${v.spec.claimRef.name}` : '')),
    computed<PersistentVolume>('StorageClass', (v) => v.spec?.storageClassName ?? ''),
    computed<PersistentVolume>('VolumeAttributesClass', (v) => v.spec?.volumeAttributesClassName ?? '<unset>'),
    computed<PersistentVolume>('Reason', (v) => v.status?.reason ?? ''),
    AGE_COLUMN,
    computed<PersistentVolume>('VolumeMode', (v) => v.spec?.volumeMode ?? 'Filesystem', { priority: 1 }),
  ],
  strategy: {
    defaults(volume) {
      const spec = volume.spec;
      if (!spec) return;
      spec.persistentVolumeReclaimPolicy ??= 'Retain';
      spec.volumeMode ??= 'Filesystem';
    },
    prepareForCreate(volume) {
      volume.status = { phase: 'Pending' };
    },
    validate(volume) {
      const spec: PersistentVolumeSpec = volume.spec ?? {};
      const causes: StatusCause[] = [];
      if (!spec.capacity?.storage) causes.push(fieldErrors.required('spec.capacity', 'must specify storage capacity'));
      if (!spec.accessModes?.length) causes.push(fieldErrors.required('spec.accessModes'));
      const sources = PV_SOURCES.filter((source) => spec[source] !== undefined);
      if (sources.length === 0) causes.push(fieldErrors.required('spec', 'must specify a volume type'));
      else if (sources.length > 1) causes.push(fieldErrors.forbidden(`spec.${sources[1]}`, 'may not specify more than 1 volume type'));
      return causes;
    },
  },
});
