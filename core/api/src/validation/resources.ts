// Container resource requirements: resource names, quantity values, and requests against limits.
import { formatQuantity, parseQuantity } from '../quantity.js';
import type { Quantity, ResourceList, StatusCause } from '../types.js';
import { child, forbidden, invalid, key, NEGATIVE_MESSAGE, required } from './field.js';
import { isQualifiedName } from './names.js';

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);
const HUGE_PAGES_PREFIX = 'hugepages-';
const REQUESTS_PREFIX = 'requests.';

const isHugePages = (name: string) => name.startsWith(HUGE_PAGES_PREFIX);
/** Native resources are Kubernetes' own: no domain, or a kubernetes.io domain. */
const isNative = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');
const isExtended = (name: string) => !isNative(name) && !name.startsWith(REQUESTS_PREFIX) && isQualifiedName(`${REQUESTS_PREFIX}${name}`).length === 0;
/** Extended resources and huge pages cannot be overcommitted: their requests must equal their limits. */
const isOvercommitAllowed = (name: string) => isNative(name) && !isHugePages(name);
const isStandardResource = (name: string) => STANDARD_RESOURCES.has(name) || isHugePages(name);
const isStandardContainerResource = (name: string) => STANDARD_CONTAINER_RESOURCES.has(name) || isHugePages(name);

/** Quantity.String(): the canonical form Kubernetes prints ("0.5" → "500m"). */
const canonical = (q: Quantity) => formatQuantity(q);

function validateContainerResourceName(name: string, field: string): StatusCause[] {
  const qualified = isQualifiedName(name).map((message) => invalid(field, name, message));
  if (qualified.length) return qualified;
  if (!name.includes('/')) {
    const causes = isStandardResource(name) ? [] : [invalid(field, name, 'must be a standard resource type or fully qualified')];
    if (!isStandardContainerResource(name)) causes.push(invalid(field, name, 'must be a standard resource for containers'));
    return causes;
  }
  if (!isNative(name) && !isExtended(name)) return [invalid(field, name, "doesn't follow extended resource name standard")];
  return [];
}

function validateQuantityValue(name: string, quantity: Quantity, field: string): StatusCause[] {
  const value = parseQuantity(quantity);
  const causes: StatusCause[] = [];
  if (value < 0) causes.push(invalid(field, canonical(quantity), NEGATIVE_MESSAGE));
  if (isExtended(name) && !Number.isInteger(value)) causes.push(invalid(field, canonical(quantity), 'must be an integer'));
  return causes;
}

const QOS_RESOURCES = ['cpu', 'memory'];

/** ValidateResourceRequirements for one container's `resources`. */
export function validateResourceRequirements(resources: { requests?: ResourceList; limits?: ResourceList } | undefined, field: string): StatusCause[] {
  const limits = resources?.limits ?? {};
  const requests = resources?.requests ?? {};
  const limitsPath = child(field, 'limits');
  const requestsPath = child(field, 'requests');
  const causes: StatusCause[] = [];
  for (const name of Object.keys(limits).sort()) {
    const path = key(limitsPath, name);
    causes.push(...validateContainerResourceName(name, path), ...validateQuantityValue(name, limits[name]!, path));
  }
  for (const name of Object.keys(requests).sort()) {
    const path = key(requestsPath, name);
    const request = requests[name]!;
    causes.push(...validateContainerResourceName(name, path), ...validateQuantityValue(name, request, path));
    const limit = limits[name];
    if (limit === undefined) {
      if (!isOvercommitAllowed(name)) causes.push(required(limitsPath, 'Limit must be set for non overcommitable resources'));
      continue;
    }
    const requested = parseQuantity(request);
    const allowed = parseQuantity(limit);
    if (requested !== allowed && !isOvercommitAllowed(name)) {
      causes.push(invalid(requestsPath, canonical(request), `must be equal to ${name} limit`));
    } else if (requested > allowed) {
      causes.push(invalid(requestsPath, canonical(request), `must be less than or equal to ${name} limit`));
    }
  }
  const names = [...Object.keys(limits), ...Object.keys(requests)];
  if (names.some(isHugePages) && !names.some((n) => QOS_RESOURCES.includes(n))) {
    causes.push(forbidden(field, 'HugePages require cpu or memory'));
  }
  return causes;
}
