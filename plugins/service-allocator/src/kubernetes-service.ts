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
import { familyOf, type ServiceCIDR } from './cidr.js';
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
  await client.updateStatus<ServiceCIDRObject>(RESOURCES.servicecidrs, { ...stored, status: { ...stored.status, conditions } });
  return undefined;
}

/**
 * The Service of the API server itself: `default/kubernetes`, ClusterIP the first address of the primary
 * range, port `https` 443 to the API server's port, and its Endpoints and EndpointSlice naming the API
 * server's address, created or corrected.
 */
export async function ensureKubernetesService(client: ApiClient, range: ServiceCIDR, address: string, port: number): Promise<void> {
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
    if (!matches) await client.update<Service>(RESOURCES.services, { ...service, spec: { ...service.spec, ports } });
  }
  await ensureEndpoints(client, address, port);
}

async function ensureEndpoints(client: ApiClient, address: string, port: number): Promise<void> {
  const endpointPort: EndpointPort = { name: PORT_NAME, port, protocol: 'TCP' };
  const subsets = [{ addresses: [{ ip: address }], ports: [endpointPort] }];
  const labels = { [LABEL_SKIP_MIRROR]: 'true' };
  const endpoints = await find<Endpoints>(client, RESOURCES.endpoints, name, namespace);
  if (!endpoints) {
    await createIgnoringExists<Endpoints>(client, RESOURCES.endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace, labels }, subsets });
  } else if (JSON.stringify(endpoints.subsets) !== JSON.stringify(subsets) || JSON.stringify(endpoints.metadata.labels) !== JSON.stringify(labels)) {
    await client.update(RESOURCES.endpoints, { ...endpoints, metadata: { ...endpoints.metadata, labels }, subsets });
  }

  const slice: Pick<EndpointSlice, 'addressType' | 'endpoints' | 'ports'> = {
    addressType: familyOf(address) ?? 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
    ports: [endpointPort],
  };
  const sliceLabels = { [LABEL_SERVICE_NAME]: name };
  const stored = await find<EndpointSlice>(client, RESOURCES.endpointslices, name, namespace);
  if (!stored) {
    await createIgnoringExists<EndpointSlice>(client, RESOURCES.endpointslices, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace, labels: sliceLabels },
      ...slice,
    });
  } else {
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (
      !same(stored.endpoints, slice.endpoints) ||
      !same(stored.ports, slice.ports) ||
      !same(stored.metadata.labels, sliceLabels) ||
      stored.addressType !== slice.addressType
    )
      await client.update(RESOURCES.endpointslices, { ...stored, ...slice, metadata: { ...stored.metadata, labels: sliceLabels } });
  }
}

async function createIgnoringExists<T extends KubeObject>(client: ApiClient, type: ResourceType, object: T): Promise<void> {
  try {
    await client.create<T>(type, object, namespace);
  } catch (err) {
    if (!isApiError(err, 'AlreadyExists')) throw err;
  }
}
