// resource.k8s.io/v1: dynamic resource allocation — device classes, resource claims and their
// templates, resource slices. CEL selectors are checked for presence only; they are not compiled.
import {
  defineKind,
  RESOURCES,
  type DeviceClass,
  type DeviceSubRequest,
  type ExactDeviceRequest,
  type KindStrategy,
  type ResourceClaim,
  type ResourceClaimSpec,
  type ResourceClaimTemplate,
  type ResourceDefinition,
  type ResourceSlice,
  type StatusCause,
} from '@skiff/api';
import { fieldErrors, isDNS1123Label, isDNS1123Subdomain, validateImmutable } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from './columns.js';

const MAX_REQUESTS = 32;
const MAX_DEVICES_PER_SLICE = 128;

/** What a request asks for: exactly these devices, or one of its first-available alternatives. */
type DeviceSelection = ExactDeviceRequest | DeviceSubRequest;

function defaultSelection(selection: DeviceSelection): void {
  selection.allocationMode ??= 'ExactCount';
  if (selection.allocationMode === 'ExactCount') selection.count ??= 1;
  for (const toleration of selection.tolerations ?? []) toleration.operator ??= 'Equal';
}

function defaultClaimSpec(spec: ResourceClaimSpec | undefined): void {
  for (const request of spec?.devices?.requests ?? []) {
    if (request.exactly) defaultSelection(request.exactly);
    for (const sub of request.firstAvailable ?? []) defaultSelection(sub);
  }
}

const labelErrors = (value: string | undefined, path: string): StatusCause[] =>
  value ? isDNS1123Label(value).map((message) => fieldErrors.invalid(path, value, message)) : [fieldErrors.required(path)];

function validateSelection(selection: DeviceSelection, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (selection.deviceClassName)
    causes.push(...isDNS1123Subdomain(selection.deviceClassName).map((m) => fieldErrors.invalid(`${path}.deviceClassName`, selection.deviceClassName, m)));
  if (selection.allocationMode === 'ExactCount' && (selection.count ?? 0) <= 0)
    causes.push(fieldErrors.invalid(`${path}.count`, selection.count ?? 0, 'must be greater than zero'));
  if (selection.allocationMode === 'All' && selection.count)
    causes.push(fieldErrors.invalid(`${path}.count`, selection.count, 'must not be specified when allocationMode is All'));
  return causes;
}

function validateClaimSpec(spec: ResourceClaimSpec | undefined, path: string): StatusCause[] {
  const requests = spec?.devices?.requests ?? [];
  const causes: StatusCause[] = [];
  if (requests.length > MAX_REQUESTS) causes.push(fieldErrors.tooMany(`${path}.devices.requests`, requests.length, MAX_REQUESTS));
  const names = new Set<string>();
  requests.forEach((request, i) => {
    const at = `${path}.devices.requests[${i}]`;
    causes.push(...labelErrors(request.name, `${at}.name`));
    if (request.name && names.has(request.name)) causes.push(fieldErrors.duplicate(`${at}.name`, request.name));
    names.add(request.name ?? '');
    const hasFirstAvailable = (request.firstAvailable?.length ?? 0) > 0;
    if (request.exactly && hasFirstAvailable)
      causes.push(fieldErrors.invalid(at, request.name ?? '', 'exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set'));
    else if (!request.exactly && !hasFirstAvailable) causes.push(fieldErrors.required(at, 'exactly one of `exactly` or `firstAvailable` is required'));
    if (request.exactly) causes.push(...validateSelection(request.exactly, `${at}.exactly`));
    const subNames = new Set<string>();
    (request.firstAvailable ?? []).forEach((sub, j) => {
      const subPath = `${at}.firstAvailable[${j}]`;
      causes.push(...labelErrors(sub.name, `${subPath}.name`));
      if (sub.name && subNames.has(sub.name)) causes.push(fieldErrors.duplicate(`${subPath}.name`, sub.name));
      subNames.add(sub.name ?? '');
      causes.push(...validateSelection(sub, subPath));
    });
  });
  return causes;
}

/** State as kubectl prints it: deleted, pending, allocated, reserved, deallocating. */
function claimState(claim: ResourceClaim): string {
  const deleting = Boolean(claim.metadata.deletionTimestamp);
  const states = deleting ? ['deleted'] : [];
  if (!claim.status?.allocation) {
    if (!deleting) states.push('pending');
  } else {
    states.push('allocated');
    if (claim.status.reservedFor?.length) states.push('reserved');
    else if (deleting) states.push('deallocating');
  }
  return states.join(',');
}

/** Claims and claim templates hold a claim spec, defaulted and checked alike; the whole spec is fixed once created. */
function claimStrategy<T extends ResourceClaim | ResourceClaimTemplate>(
  claimSpec: (object: T) => ResourceClaimSpec | undefined,
  path: string,
): KindStrategy<T> {
  return {
    defaults: (object) => defaultClaimSpec(claimSpec(object)),
    validate(object, old) {
      const causes = validateClaimSpec(claimSpec(object), path);
      if (old) causes.push(...validateImmutable(object.spec, old.spec, 'spec'));
      return causes;
    },
  };
}

export const deviceClasses = defineKind<DeviceClass>(RESOURCES.deviceclasses);

export const resourceClaims = defineKind<ResourceClaim>({
  ...{},
  ...RESOURCES.resourceclaims,
  subresources: ['status'],
  columns: [computed('State', claimState), AGE_COLUMN],
  strategy: claimStrategy((claim) => claim.spec, 'spec'),
});

export const resourceClaimTemplates = defineKind<ResourceClaimTemplate>({
  ...{},
  ...RESOURCES.resourceclaimtemplates,
  strategy: claimStrategy((template) => template.spec?.spec, 'spec.spec'),
});

export const resourceSlices = defineKind<ResourceSlice>({
  ...{},
  ...RESOURCES.resourceslices,
  columns: [
    computed('Node', (slice) => slice.spec?.nodeName ?? ''),
    computed('Driver', (slice) => slice.spec?.driver ?? ''),
    computed('Pool', (slice) => slice.spec?.pool?.name ?? ''),
    AGE_COLUMN,
  ],
  strategy: {
    validate(slice, old) {
      const spec = slice.spec ?? {};
      const causes: StatusCause[] = [];
      if (spec.driver) causes.push(...isDNS1123Subdomain(spec.driver).map((message) => fieldErrors.invalid('spec.driver', spec.driver, message)));
      const selections = [spec.nodeName, spec.nodeSelector, spec.allNodes || undefined, spec.perDeviceNodeSelection || undefined].filter(
        (value) => value !== undefined && value !== null && value !== '',
      ).length;
      if (selections !== 1)
        causes.push(
          fieldErrors.invalid(
            'spec',
            '{`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`}',
            'exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required',
          ),
        );
      const devices = spec.devices ?? [];
      if (devices.length > MAX_DEVICES_PER_SLICE) causes.push(fieldErrors.tooMany('spec.devices', devices.length, MAX_DEVICES_PER_SLICE));
      const names = new Set<string>();
      devices.forEach((device, i) => {
        causes.push(...labelErrors(device.name, `spec.devices[${i}].name`));
        if (device.name && names.has(device.name)) causes.push(fieldErrors.duplicate(`spec.devices[${i}].name`, device.name));
        names.add(device.name ?? '');
      });
      if (old) {
        const was = old.spec ?? {};
        causes.push(...validateImmutable(spec.driver, was.driver, 'spec.driver'));
        causes.push(...validateImmutable(spec.nodeName, was.nodeName, 'spec.nodeName'));
      }
      return causes;
    },
  },
});

export const RESOURCE_KINDS: ResourceDefinition[] = [deviceClasses, resourceClaims, resourceClaimTemplates, resourceSlices];
