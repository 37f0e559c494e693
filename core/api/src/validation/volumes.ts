import { isValidQuantity } from '../quantity.js';
import { isJsonObject } from '../guards.js';
import type { StatusCause, Volume } from '../types.js';
import { child, duplicate, forbidden, index, invalid, required } from './field.js';
import { isDNS1123Label } from './names.js';

// The volume sources in the order Kubernetes' validation checks them (not the struct order), so the one
// reported as a second volume type is the one it reports.
const VOLUME_SOURCE_FIELDS = [
  'emptyDir',
  'hostPath',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'flocker',
  'persistentVolumeClaim',
  'rbd',
  'cinder',
  'cephfs',
  'quobyte',
  'downwardAPI',
  'fc',
  'flexVolume',
  'configMap',
  'azureFile',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'azureDisk',
  'csi',
  'projected',
  'scaleIO',
  'storageos',
  'ephemeral',
  'image',
] as const satisfies readonly (keyof Volume)[];

const asRecord = (value: unknown): Record<string, unknown> => (isJsonObject(value) ? value : {});

/** The fields each common source cannot do without. */
function validateSource(source: string, value: Record<string, unknown>, field: string): StatusCause[] {
  switch (source) {
    case 'hostPath':
      return value.path ? [] : [required(child(field, 'path'))];
    case 'secret':
      return value.secretName ? [] : [required(child(field, 'secretName'))];
    case 'configMap':
      return value.name ? [] : [required(child(field, 'name'))];
    case 'persistentVolumeClaim':
      return value.claimName ? [] : [required(child(field, 'claimName'))];
    case 'emptyDir':
      return value.sizeLimit === undefined || isValidQuantity(value.sizeLimit)
        ? []
        : [invalid(child(field, 'sizeLimit'), value.sizeLimit, 'must be a valid quantity')];
    default:
      return [];
  }
}

function validateVolumeSource(volume: Volume, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  let found = 0;
  for (const source of VOLUME_SOURCE_FIELDS) {
    if (volume[source] === undefined || volume[source] === null) continue;
    if (found > 0) {
      causes.push(forbidden(child(field, source), 'may not specify more than 1 volume type'));
      continue;
    }
    found += 1;
    causes.push(...validateSource(source, asRecord(volume[source]), child(field, source)));
  }
  if (found === 0) causes.push(required(field, 'must specify a volume type'));
  return causes;
}

/** ValidateVolumes: returns the causes and the names of the volumes that are valid (mounts may refer only to those). */
export function validateVolumes(volumes: Volume[] | undefined, field: string): { causes: StatusCause[]; names: Set<string> } {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  (volumes ?? []).forEach((volume, i) => {
    const path = index(field, i);
    const namePath = child(path, 'name');
    const name = volume.name ?? '';
    const errs = validateVolumeSource(volume, path);
    if (!name) errs.push(required(namePath));
    else errs.push(...isDNS1123Label(name).map((message) => invalid(namePath, name, message)));
    if (names.has(name)) errs.push(duplicate(namePath, name));
    if (errs.length === 0) names.add(name);
    else causes.push(...errs);
  });
  return { causes, names };
}
