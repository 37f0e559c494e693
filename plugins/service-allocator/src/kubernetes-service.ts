import { isApiError, type KubeObject } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { familyOf, type ServiceCIDR } from './cidr.js';
import {
  DEFAULT_SERVICE_CIDR_NAME,
  ENDPOINT_SLICES,
  ENDPOINTS,
  KUBERNETES_SERVICE,
  LABEL_SERVICE_NAME,
  LABEL_SKIP_MIRROR,
  SERVICE_CIDRS,
  SERVICES,
} from './names.js';
import type { Service } from './service-spec.js';

const { namespace, name } = KUBERNETES_SERVICE;
const PORT_NAME = 'https';
const SERVICE_PORT = 443;

async function find<T extends KubeObject>(client: ApiClient, type: typeof SERVICES, objectName: string, objectNamespace?: string): Promise<T | undefined> {
  try {
    return await client.get<T>(type, objectName, objectNamespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

interface ServiceCIDRObject extends KubeObject {
  spec?: { cidrs?: string[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[] };
}

/**
 * The `kubernetes` ServiceCIDR holds the configured ranges, Ready, as kube-apiserver's default ServiceCIDR
 * controller keeps it. Answers a warning when a stored one names other ranges (it is left as it is).
 */
export async function ensureServiceCIDR(client: ApiClient, ranges: readonly ServiceCIDR[]): Promise<string | undefined> {
  const cidrs = ranges.map((range) => range.toString());
  let stored = await find<ServiceCIDRObject>(client, SERVICE_CIDRS, DEFAULT_SERVICE_CIDR_NAME);
  if (!stored) {
    try {
      stored = await client.create<ServiceCIDRObject>(SERVICE_CIDRS, {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'ServiceCIDR',
        metadata: { name: DEFAULT_SERVICE_CIDR_NAME },
        spec: { cidrs },
      });
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
      stored = await client.get<ServiceCIDRObject>(SERVICE_CIDRS, DEFAULT_SERVICE_CIDR_NAME);
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
  await client.updateStatus<ServiceCIDRObject>(SERVICE_CIDRS, { ...stored, status: { ...stored.status, conditions } });
  return undefined;
}

/**
 * The Service of the API server itself: `default/kubernetes`, ClusterIP the first address of the primary
 * range, port `https` 443 to the API server's port, and its Endpoints and EndpointSlice naming the API
 * server's address, created or corrected.
 */
export async function ensureKubernetesService(client: ApiClient, range: ServiceCIDR, address: string, port: number): Promise<void> {
  const clusterIP = range.at(0n);
  const ports = [{ name: PORT_NAME, protocol: 'TCP', port: SERVICE_PORT, targetPort: port }];
  const service = await find<Service>(client, SERVICES, name, namespace);
  if (!service) {
    try {
      await client.create<Service>(
        SERVICES,
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace, labels: { component: 'apiserver', provider: 'kubernetes' } },
          spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports, sessionAffinity: 'None' } as Service['spec'],
        },
        namespace,
      );
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
    }
  } else {
    const current = service.spec?.ports ?? [];
    const matches = current.length === 1 && current[0]!.name === PORT_NAME && current[0]!.port === SERVICE_PORT && current[0]!.targetPort === port;
    if (!matches) await client.update<Service>(SERVICES, { ...service, spec: { ...service.spec, ports } });
  }
  await ensureEndpoints(client, address, port);
}

async function ensureEndpoints(client: ApiClient, address: string, port: number): Promise<void> {
  const endpointPort = { name: PORT_NAME, port, protocol: 'TCP' };
  const subsets = [{ addresses: [{ ip: address }], ports: [endpointPort] }];
  const labels = { [LABEL_SKIP_MIRROR]: 'true' };
  const endpoints = await find<KubeObject & { subsets?: unknown }>(client, ENDPOINTS, name, namespace);
  if (!endpoints) {
    await createIgnoringExists(client, ENDPOINTS, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace, labels }, subsets });
  } else if (JSON.stringify(endpoints.subsets) !== JSON.stringify(subsets) || JSON.stringify(endpoints.metadata.labels) !== JSON.stringify(labels)) {
    await client.update(ENDPOINTS, { ...endpoints, metadata: { ...endpoints.metadata, labels }, subsets });
  }

  const slice = {
    addressType: familyOf(address) ?? 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
    ports: [endpointPort],
  };
  const sliceLabels = { [LABEL_SERVICE_NAME]: name };
  const stored = await find<KubeObject & typeof slice>(client, ENDPOINT_SLICES, name, namespace);
  if (!stored) {
    await createIgnoringExists(client, ENDPOINT_SLICES, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace, labels: sliceLabels },
      ...slice,
    } as KubeObject);
  } else {
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (
      !same(stored.endpoints, slice.endpoints) ||
      !same(stored.ports, slice.ports) ||
      !same(stored.metadata.labels, sliceLabels) ||
      stored.addressType !== slice.addressType
    )
      await client.update(ENDPOINT_SLICES, { ...stored, ...slice, metadata: { ...stored.metadata, labels: sliceLabels } });
  }
}

async function createIgnoringExists(client: ApiClient, type: typeof SERVICES, object: KubeObject): Promise<void> {
  try {
    await client.create(type, object, namespace);
  } catch (err) {
    if (!isApiError(err, 'AlreadyExists')) throw err;
  }
}
