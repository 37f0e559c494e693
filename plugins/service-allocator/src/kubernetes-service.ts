import {
  isApiError,
  RESOURCES,
  type EndpointPort,
  type Endpoints,
  type EndpointSlice,
  type KubeObject,
  type ResourceType,
  type ResourceTypes,
  type Service,
  type ServicePort,
} from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { familyOf, type IPFamily, type ServiceCIDR } from './cidr.js';
import { DEFAULT_SERVICE_CIDR_NAME, KUBERNETES_SERVICE, LABEL_SERVICE_NAME, LABEL_SKIP_MIRROR } from './names.js';

/** The ServiceCIDR kind (cidr.js's ServiceCIDR is the range this allocator hands addresses out of). */
type ServiceCIDRObject = ResourceTypes['servicecidrs.networking.k8s.io'];

const { namespace, name } = KUBERNETES_SERVICE;
const PORT_NAME = 'https';
const SERVICE_PORT = 443;

async function find<T extends KubeObject>(client: ApiClient, type: ResourceType, objectName: string, objectNamespace?: string): Promise<T | undefined> {
  try {
    return await client.get<T>(type, objectName, objectNamespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

/**
 * The `kubernetes` ServiceCIDR holds the configured ranges, Ready, as kube-apiserver's default ServiceCIDR
 * controller keeps it. Answers a warning when a stored one names other ranges (it is left as it is).
 */
export async function ensureServiceCIDR(client: ApiClient, ranges: readonly ServiceCIDR[]): Promise<string | undefined> {
  const cidrs = ranges.map((range) => range.toString());
  let stored = await find<ServiceCIDRObject>(client, RESOURCES.servicecidrs, DEFAULT_SERVICE_CIDR_NAME);
  if (!stored) {
    try {
      stored = await client.create<ServiceCIDRObject>(RESOURCES.servicecidrs, {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'ServiceCIDR',
        metadata: { name: DEFAULT_SERVICE_CIDR_NAME },
        spec: { cidrs },
      });
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
      stored = await client.get<ServiceCIDRObject>(RESOURCES.servicecidrs, DEFAULT_SERVICE_CIDR_NAME);
    }
  }
  const storedCIDRs = stored.spec?.cidrs ?? [];
  if (storedCIDRs.join(',') !== cidrs.join(','))
    return `the ServiceCIDR "${DEFAULT_SERVICE_CIDR_NAME}" holds ${storedCIDRs.join(',')}, not the configured ${cidrs.join(',')}; it is left as it is`;
  const ready = stored.status?.conditions?.find((condition) => condition.type === 'Ready');
  if (ready?.status === 'True') return undefined;
  const conditions = (stored.status?.conditions ?? []).filter((condition) => condition.type !== 'Ready');
  // Upstream leaves the reason empty; this API server's condition schema requires one.
  conditions.push({
    type: 'Ready',
    status: 'True',
    reason: 'Ready',
    message: 'Kubernetes default Service CIDR is ready',
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  });
  await client.updateStatus<ServiceCIDRObject>(RESOURCES.servicecidrs, { ...{}, ...stored, status: { ...{}, ...stored.status, conditions } });
  return undefined;
}

/**
 * The Service of the API server itself: `default/kubernetes`, ClusterIP the first address of the primary
 * range, port `https` 443 to the API server's port, created or corrected. Its Endpoints and EndpointSlice
 * are the endpoint reconciler's (endpoint-reconciler.ts).
 */
export async function ensureKubernetesService(client: ApiClient, range: ServiceCIDR, port: number): Promise<void> {
  const clusterIP = range.at(0n);
  const ports: ServicePort[] = [{ name: PORT_NAME, protocol: 'TCP', port: SERVICE_PORT, targetPort: port }];
  const service = await find<Service>(client, RESOURCES.services, name, namespace);
  if (!service) {
    try {
      await client.create<Service>(
        RESOURCES.services,
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace, labels: { component: 'apiserver', provider: 'kubernetes' } },
          spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports, sessionAffinity: 'None' },
        },
        namespace,
      );
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
    }
  } else {
    const current = service.spec?.ports ?? [];
    const matches = current.length === 1 && current[0]!.name === PORT_NAME && current[0]!.port === SERVICE_PORT && current[0]!.targetPort === port;
    if (!matches) await client.update<Service>(RESOURCES.services, { ...{}, ...service, spec: { ...{}, ...service.spec, ports } });
  }
}

/** The Endpoints and EndpointSlice of `default/kubernetes` as read, either missing. */
export interface KubernetesEndpoints {
  endpoints?: Endpoints;
  slice?: EndpointSlice;
}

export async function readKubernetesEndpoints(client: ApiClient): Promise<KubernetesEndpoints> {
  const [endpoints, slice] = await Promise.all([
    find<Endpoints>(client, RESOURCES.endpoints, name, namespace),
    find<EndpointSlice>(client, RESOURCES.endpointslices, name, namespace),
  ]);
  return { endpoints, slice };
}

/**
 * Makes the Endpoints and the EndpointSlice of `default/kubernetes` name `addresses` (in this order) on
 * `port`, writing only what differs from `stored`. Updates carry the resourceVersion that was read, so a
 * write someone made since is a Conflict rather than lost, as a create that lost a race is AlreadyExists. The EndpointSlice has one address type: it
 * lists the addresses of `family` only.
 */
export async function writeKubernetesEndpoints(
  client: ApiClient,
  stored: KubernetesEndpoints,
  addresses: readonly string[],
  port: number,
  family: IPFamily,
): Promise<void> {
  const endpointPort: EndpointPort = { name: PORT_NAME, port, protocol: 'TCP' };
  const subsets = addresses.length ? [{ addresses: addresses.map((ip) => ({ ip })), ports: [endpointPort] }] : [];
  const labels = { [LABEL_SKIP_MIRROR]: 'true' };
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const { endpoints } = stored;
  if (!endpoints) {
    await client.create<Endpoints>(RESOURCES.endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace, labels }, subsets }, namespace);
  } else if (!same(endpoints.subsets ?? [], subsets) || !same(endpoints.metadata.labels, labels)) {
    await client.update(RESOURCES.endpoints, { ...{}, ...endpoints, metadata: { ...{}, ...endpoints.metadata, labels }, subsets });
  }

  const slice: Pick<EndpointSlice, 'addressType' | 'endpoints' | 'ports'> = {
    addressType: family,
    endpoints: addresses.filter((ip) => familyOf(ip) === family).map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [endpointPort],
  };
  const sliceLabels = { [LABEL_SERVICE_NAME]: name };
  const storedSlice = stored.slice;
  if (!storedSlice) {
    await client.create<EndpointSlice>(
      RESOURCES.endpointslices,
      { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, namespace, labels: sliceLabels }, ...slice },
      namespace,
    );
  } else if (
    !same(storedSlice.endpoints ?? [], slice.endpoints) ||
    !same(storedSlice.ports, slice.ports) ||
    !same(storedSlice.metadata.labels, sliceLabels) ||
    storedSlice.addressType !== slice.addressType
  ) {
    await client.update(RESOURCES.endpointslices, { ...{}, ...storedSlice, ...slice, metadata: { ...{}, ...storedSlice.metadata, labels: sliceLabels } });
  }
}
