// storage.k8s.io/v1: storage classes, CSI drivers and nodes, volume attachments, volume attributes
// classes and CSI storage capacities.
import {
  defineKind,
  sameStringMap,
  RESOURCES,
  type CSIDriver,
  type CSINode,
  type CSIStorageCapacity,
  type ResourceDefinition,
  type StatusCause,
  type StorageClass,
  type VolumeAttachment,
  type VolumeAttributesClass,
  STATUS_ONLY_METADATA,
} from '@skiff/api';
import { fieldErrors, isDNS1123Subdomain, validateImmutable, validateLabelSelector, validateQualifiedName } from '@skiff/api/validation';
import { AGE_COLUMN, column, computed } from './columns.js';

const DEFAULT_CLASS_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];
const CSI_DRIVER_NAME_MAX_LENGTH = 63;
const CSI_NODE_ID_MAX_LENGTH = 192;
const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_BYTES = 256 * 1024;
const MIN_TOKEN_SECONDS = 600;
const MAX_TOKEN_SECONDS = 2 ** 32;

/** A CSI driver name: at most 63 characters, a DNS subdomain once lower-cased. */
function validateDriverName(name: string | undefined, path: string): StatusCause[] {
  if (!name) return [fieldErrors.required(path)];
  const causes: StatusCause[] = [];
  if (name.length > CSI_DRIVER_NAME_MAX_LENGTH) causes.push(fieldErrors.tooLong(path, CSI_DRIVER_NAME_MAX_LENGTH));
  causes.push(...isDNS1123Subdomain(name.toLowerCase()).map((message) => fieldErrors.invalid(path, name, message)));
  return causes;
}

/** Opaque driver parameters: non-empty keys, at most 512 of them and 256 KiB in all. */
function validateParameters(parameters: Record<string, string> | undefined, path: string, allowEmpty: boolean): StatusCause[] {
  const entries = Object.entries(parameters ?? {});
  if (!allowEmpty && entries.length === 0) return [fieldErrors.required(path)];
  const causes: StatusCause[] = [];
  if (entries.length > MAX_PARAMETERS) causes.push(fieldErrors.tooLong(path, MAX_PARAMETERS));
  let size = 0;
  for (const [key, value] of entries) {
    if (key.length === 0) causes.push(fieldErrors.invalid(path, key, 'field can not be empty.'));
    size += Buffer.byteLength(key) + Buffer.byteLength(value ?? '');
  }
  if (size > MAX_PARAMETERS_BYTES) causes.push(fieldErrors.tooLong(path, MAX_PARAMETERS_BYTES));
  return causes;
}

function validateAllowedTopologies(terms: StorageClass['allowedTopologies']): StatusCause[] {
  const causes: StatusCause[] = [];
  (terms ?? []).forEach((term, i) => {
    const path = `allowedTopologies[${i}].matchLabelExpressions`;
    const expressions = term.matchLabelExpressions ?? [];
    if (expressions.length === 0) causes.push(fieldErrors.required(path, 'must contain at least one key/value pair'));
    const keys = new Set<string>();
    expressions.forEach((expression, j) => {
      const at = `${path}[${j}]`;
      const key = expression.key ?? '';
      causes.push(...validateQualifiedName(key, `${at}.key`));
      if (keys.has(key)) causes.push(fieldErrors.duplicate(`${at}.key`, key));
      keys.add(key);
      if ((expression.values ?? []).length === 0) causes.push(fieldErrors.required(`${at}.values`, 'must specify as least one value to match'));
    });
  });
  return causes;
}

function isDefaultClass(sc: StorageClass): boolean {
  return DEFAULT_CLASS_ANNOTATIONS.some((annotation) => sc.metadata.annotations?.[annotation] === 'true');
}

export const storageClasses = defineKind<StorageClass>({
  ...{},
  ...RESOURCES.storageclasses,
  columns: [
    { name: 'Name', format: 'name', cell: (sc) => (isDefaultClass(sc) ? `${sc.metadata.name} (default)` : sc.metadata.name) },
    column('Provisioner', '.provisioner'),
    computed('ReclaimPolicy', (sc) => sc.reclaimPolicy ?? 'Delete'),
    computed('VolumeBindingMode', (sc) => sc.volumeBindingMode ?? 'Immediate'),
    computed('AllowVolumeExpansion', (sc) => sc.allowVolumeExpansion ?? false),
    AGE_COLUMN,
  ],
  strategy: {
    defaults(sc) {
      sc.reclaimPolicy ??= 'Delete';
      sc.volumeBindingMode ??= 'Immediate';
    },
    validate(sc, was) {
      const causes: StatusCause[] = [];
      if (!sc.provisioner) causes.push(fieldErrors.required('provisioner'));
      else causes.push(...validateQualifiedName(sc.provisioner.toLowerCase(), 'provisioner'));
      causes.push(...validateParameters(sc.parameters, 'parameters', true));
      // Recycle is a volume's reclaim policy only; a class cannot provision with it.
      if (sc.reclaimPolicy !== undefined && sc.reclaimPolicy !== 'Delete' && sc.reclaimPolicy !== 'Retain') {
        causes.push(fieldErrors.notSupported('reclaimPolicy', sc.reclaimPolicy, ['Delete', 'Retain']));
      }
      causes.push(...validateAllowedTopologies(sc.allowedTopologies));
      if (was) {
        if (!sameStringMap(sc.parameters, was.parameters)) {
          causes.push(fieldErrors.forbidden('parameters', 'updates to parameters are forbidden.'));
        }
        if (sc.provisioner !== was.provisioner) causes.push(fieldErrors.forbidden('provisioner', 'updates to provisioner are forbidden.'));
        if (sc.reclaimPolicy !== was.reclaimPolicy) causes.push(fieldErrors.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
        causes.push(...validateImmutable(sc.volumeBindingMode, was.volumeBindingMode, 'volumeBindingMode'));
      }
      return causes;
    },
  },
});

export const csiDrivers = defineKind<CSIDriver>({
  ...{},
  ...RESOURCES.csidrivers,
  columns: [
    computed('AttachRequired', (d) => d.spec?.attachRequired ?? true, { type: 'boolean' }),
    computed('PodInfoOnMount', (d) => d.spec?.podInfoOnMount ?? false, { type: 'boolean' }),
    computed('StorageCapacity', (d) => d.spec?.storageCapacity ?? false, { type: 'boolean' }),
    computed('TokenRequests', (d) => (d.spec?.tokenRequests ? d.spec.tokenRequests.map((t) => t.audience ?? '').join(',') : '<unset>')),
    computed('RequiresRepublish', (d) => d.spec?.requiresRepublish ?? false, { type: 'boolean' }),
    computed('Modes', (d) => (d.spec?.volumeLifecycleModes ?? []).join(',') || '<none>'),
    AGE_COLUMN,
  ],
  strategy: {
    defaults(object) {
      const spec = (object.spec ??= {});
      spec.attachRequired ??= true;
      spec.podInfoOnMount ??= false;
      spec.storageCapacity ??= false;
      spec.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
      if (!spec.volumeLifecycleModes?.length) spec.volumeLifecycleModes = ['Persistent'];
      spec.requiresRepublish ??= false;
      spec.seLinuxMount ??= false;
    },
    validate(driver, old) {
      const spec = driver.spec ?? {};
      const causes: StatusCause[] = [];
      if ((driver.metadata.name ?? '').length > CSI_DRIVER_NAME_MAX_LENGTH) causes.push(fieldErrors.tooLong('metadata.name', CSI_DRIVER_NAME_MAX_LENGTH));
      for (const field of ['attachRequired', 'podInfoOnMount', 'storageCapacity', 'requiresRepublish'] as const) {
        if (spec[field] === undefined) causes.push(fieldErrors.required(`spec.${field}`));
      }
      if (spec.fsGroupPolicy === undefined) causes.push(fieldErrors.required('spec.fsGroupPolicy'));
      else if (!['File', 'None', 'ReadWriteOnceWithFSType'].includes(spec.fsGroupPolicy)) {
        causes.push(fieldErrors.notSupported('spec.fsGroupPolicy', spec.fsGroupPolicy, ['File', 'None', 'ReadWriteOnceWithFSType']));
      }
      (spec.volumeLifecycleModes ?? []).forEach((mode, i) => {
        if (mode !== 'Persistent' && mode !== 'Ephemeral')
          causes.push(fieldErrors.notSupported(`spec.volumeLifecycleModes[${i}]`, mode, ['Ephemeral', 'Persistent']));
      });
      const audiences = new Set<string>();
      (spec.tokenRequests ?? []).forEach((request, i) => {
        const path = `spec.tokenRequests[${i}]`;
        const audience = request.audience ?? '';
        if (audiences.has(audience)) causes.push(fieldErrors.duplicate(`${path}.audience`, audience));
        audiences.add(audience);
        const seconds = request.expirationSeconds;
        if (seconds !== undefined && seconds < MIN_TOKEN_SECONDS)
          causes.push(fieldErrors.invalid(`${path}.expirationSeconds`, seconds, 'may not specify a duration less than 10 minutes'));
        if (seconds !== undefined && seconds > MAX_TOKEN_SECONDS)
          causes.push(fieldErrors.invalid(`${path}.expirationSeconds`, seconds, 'may not specify a duration larger than 2^32 seconds'));
      });
      if (old) {
        const was = old.spec ?? {};
        causes.push(...validateImmutable(spec.attachRequired, was.attachRequired, 'spec.attachRequired'));
        causes.push(...validateImmutable(spec.volumeLifecycleModes, was.volumeLifecycleModes, 'spec.volumeLifecycleModes'));
      }
      return causes;
    },
  },
});

export const csiNodes = defineKind<CSINode>({
  ...{},
  ...RESOURCES.csinodes,
  columns: [computed('Drivers', (node) => node.spec?.drivers?.length ?? 0, { type: 'integer' }), AGE_COLUMN],
  strategy: {
    validate(node, old) {
      const drivers = node.spec?.drivers ?? [];
      const causes: StatusCause[] = [];
      const names = new Set<string>();
      drivers.forEach((driver, i) => {
        const path = `spec.drivers[${i}]`;
        causes.push(...validateDriverName(driver.name, `${path}.name`));
        if (driver.name && names.has(driver.name)) causes.push(fieldErrors.duplicate(`${path}.name`, driver.name));
        names.add(driver.name ?? '');
        if (!driver.nodeID) causes.push(fieldErrors.required(`${path}.nodeID`));
        else if (driver.nodeID.length > CSI_NODE_ID_MAX_LENGTH) causes.push(fieldErrors.tooLong(`${path}.nodeID`, CSI_NODE_ID_MAX_LENGTH));
        (driver.topologyKeys ?? []).forEach((key, j) => causes.push(...validateQualifiedName(key, `${path}.topologyKeys[${j}]`)));
        const count = driver.allocatable?.count;
        if (count !== undefined && count < 0) causes.push(fieldErrors.invalid(`${path}.allocatable.count`, count, 'must be greater than or equal to 0'));
      });
      if (old) {
        // A driver keeps its node ID and topology keys while it stays registered on the node.
        const previous = new Map((old.spec?.drivers ?? []).map((driver) => [driver.name, driver]));
        drivers.forEach((driver, i) => {
          const was = previous.get(driver.name);
          if (!was) return;
          causes.push(...validateImmutable(driver.nodeID, was.nodeID, `spec.drivers[${i}].nodeID`));
          causes.push(...validateImmutable(driver.topologyKeys, was.topologyKeys, `spec.drivers[${i}].topologyKeys`));
        });
      }
      return causes;
    },
  },
});

export const volumeAttachments = defineKind<VolumeAttachment>({
  ...{},
  ...RESOURCES.volumeattachments,
  subresources: ['status'],
  keptOnStatusUpdate: STATUS_ONLY_METADATA,
  columns: [
    column('Attacher', '.spec.attacher'),
    computed('PV', (va) => va.spec?.source?.persistentVolumeName ?? ''),
    computed('Node', (va) => va.spec?.nodeName ?? ''),
    computed('Attached', (va) => va.status?.attached ?? false, { type: 'boolean' }),
    AGE_COLUMN,
  ],
  strategy: {
    validate(attachment, old) {
      const spec = attachment.spec ?? {};
      const causes = validateDriverName(spec.attacher, 'spec.attacher');
      if (!spec.nodeName) causes.push(fieldErrors.required('spec.nodeName'));
      else causes.push(...isDNS1123Subdomain(spec.nodeName).map((message) => fieldErrors.invalid('spec.nodeName', spec.nodeName, message)));
      const source = spec.source ?? {};
      const sources = [source.persistentVolumeName, source.inlineVolumeSpec].filter((value) => value !== undefined && value !== null).length;
      if (sources !== 1) causes.push(fieldErrors.invalid('spec.source', source, 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
      if (old) causes.push(...validateImmutable(spec, old.spec, 'spec'));
      return causes;
    },
  },
});

export const volumeAttributesClasses = defineKind<VolumeAttributesClass>({
  ...{},
  ...RESOURCES.volumeattributesclasses,
  columns: [column('DriverName', '.driverName'), AGE_COLUMN],
  strategy: {
    validate(vac, was) {
      const causes = [...validateDriverName(vac.driverName, 'driverName'), ...validateParameters(vac.parameters, 'parameters', false)];
      if (was) {
        causes.push(...validateImmutable(vac.driverName, was.driverName, 'driverName'));
        if (!sameStringMap(vac.parameters, was.parameters)) causes.push(fieldErrors.forbidden('parameters', 'updates to parameters are forbidden.'));
      }
      return causes;
    },
  },
});

export const csiStorageCapacities = defineKind<CSIStorageCapacity>({
  ...{},
  ...RESOURCES.csistoragecapacities,
  columns: [column('StorageClassName', '.storageClassName'), computed('Capacity', (c) => c.capacity ?? '<unset>')],
  strategy: {
    validate(capacity) {
      const causes: StatusCause[] = [];
      if (!capacity.storageClassName) causes.push(fieldErrors.required('storageClassName'));
      else
        causes.push(
          ...isDNS1123Subdomain(capacity.storageClassName).map((message) => fieldErrors.invalid('storageClassName', capacity.storageClassName, message)),
        );
      if (capacity.nodeTopology) causes.push(...validateLabelSelector(capacity.nodeTopology, 'nodeTopology'));
      for (const field of ['capacity', 'maximumVolumeSize'] as const) {
        const value = capacity[field];
        const negative = typeof value === 'number' ? value < 0 : value?.trim().startsWith('-');
        if (negative) causes.push(fieldErrors.invalid(field, value, 'must be greater than or equal to 0'));
      }
      return causes;
    },
  },
});

export const STORAGE_KINDS: ResourceDefinition[] = [csiDrivers, csiNodes, csiStorageCapacities, storageClasses, volumeAttachments, volumeAttributesClasses];
