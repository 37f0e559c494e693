import { ADMISSION_STAGE } from '@skiff/kernel';
import { RESOURCES, type UserInfo } from '@skiff/api';

export const PLUGIN_NAME = '@skiff/plugin-service-allocator';

/**
 * Allocation runs after every other mutating admission plugin, as upstream's service storage allocates
 * after mutating admission: the object it allocates for is the one that will be validated and stored.
 */
export const SERVICE_ALLOCATION_STAGE = ADMISSION_STAGE.QUOTA + 100;

/** The API server's own identity for the objects it writes (IPAddresses, the kubernetes Service). */
export const APISERVER_USER: UserInfo = Object.freeze({
  username: 'system:apiserver',
  uid: 'system:apiserver',
  groups: ['system:masters', 'system:authenticated'],
});

/** The value of `ipaddress.kubernetes.io/managed-by` on IPAddresses this allocator owns. */
export const IP_ALLOCATOR_NAME = 'ipallocator.k8s.io';
export const LABEL_IP_FAMILY = 'ipaddress.kubernetes.io/ip-family';
export const LABEL_MANAGED_BY = 'ipaddress.kubernetes.io/managed-by';
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';

/** The ServiceCIDR holding the configured ranges, and the Service of the API server itself. */
export const DEFAULT_SERVICE_CIDR_NAME = 'kubernetes';
export const KUBERNETES_SERVICE = Object.freeze({ namespace: 'default', name: 'kubernetes' });

/** IPAddresses and node ports handed out by a request that never finished are freed after this long. */
export const ALLOCATION_GRACE_MS = 60_000;

/** The plugin entry (index.ts) reads Services under this name. */
export const SERVICES = RESOURCES.services;

/** Where API servers keep their endpoint leases, and how those leases are marked. */
export const ENDPOINT_LEASE_NAMESPACE = 'kube-system';
/** Upstream's label on kube-apiserver identity leases. */
export const LABEL_APISERVER_IDENTITY = 'apiserver.kubernetes.io/identity';
export const APISERVER_IDENTITY = 'kube-apiserver';
/** Marks a Lease whose holder's address belongs in the kubernetes Service's endpoints. */
export const LABEL_ENDPOINT_RECONCILER = 'skiff.dev/endpoint-reconciler';
export const ENDPOINT_RECONCILER_LEASE = 'lease';
export const ANNOTATION_ADVERTISE_ADDRESS = 'skiff.dev/advertise-address';
export const ANNOTATION_ADVERTISE_PORT = 'skiff.dev/advertise-port';
