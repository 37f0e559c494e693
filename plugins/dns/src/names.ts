import { LIFECYCLE_STAGE } from '@skiff/kernel';
import { RESOURCES, type UserInfo } from '@skiff/api';

/** The npm package name: cluster configs name the plugin by it, and every tap carries it. */
export const PLUGIN_NAME = '@skiff/plugin-dns';

/** After the API server and the Service allocator (it reads and writes through them), before the controllers. */
export const DNS_STAGE = LIFECYCLE_STAGE.CONTROLLER_MANAGER - 10;

/** The identity this plugin reads Services and EndpointSlices and publishes kube-dns as. */
export const DNS_USER: UserInfo = Object.freeze({
  username: 'system:skiff-dns',
  uid: 'system:skiff-dns',
  groups: ['system:masters', 'system:authenticated'],
});

/** The version of the Kubernetes DNS-Based Service Discovery specification served (the dns-version TXT record). */
export const SCHEMA_VERSION = '1.1.0';

export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
/** The managed-by value of the kube-dns EndpointSlice: the EndpointSlice controller leaves it alone. */
export const MANAGED_BY = 'skiff-dns';

/** Where this server announces itself: the Service pods' resolv.conf points at and its one EndpointSlice. */
export const KUBE_DNS = Object.freeze({
  namespace: 'kube-system',
  service: 'kube-dns',
  slice: 'kube-dns-skiff',
  labels: Object.freeze({ 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'SkiffDNS' }),
});

export const SERVICES = RESOURCES.services;
export const ENDPOINT_SLICES = RESOURCES.endpointslices;
