import { isIPv6 } from 'node:net';
import { errorMessage, isApiError, type EndpointSlice, type ResourceType, type Service, type ServicePort } from '@skiff/api';
import type { ApiClient, Logger } from '@skiff/kernel';
import { DnsError } from './errors.js';
import { ENDPOINT_SLICES, KUBE_DNS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY, SERVICES } from './names.js';

const { namespace, service: name, slice: sliceName } = KUBE_DNS;
const DNS_PORT = 53;

async function find<T extends Service | EndpointSlice>(client: ApiClient, type: ResourceType, objectName: string): Promise<T | undefined> {
  try {
    return await client.get<T>(type, objectName, namespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Announces the server the way kubeadm's CoreDNS is found: the selector-less Service kube-system/kube-dns at
 * `serviceIP`, port 53 (UDP and TCP) to the server's port, and one EndpointSlice naming the server's address.
 * Both are created, or corrected after a restart (the port changes). A kube-dns Service with a selector
 * belongs to another DNS deployment and is left alone.
 */
export async function publishKubeDns(client: ApiClient, serviceIP: string, address: string, port: number, logger: Logger): Promise<void> {
  try {
    const published = await ensureService(client, serviceIP, port, logger);
    if (published) await ensureSlice(client, address, port);
  } catch (err) {
    if (err instanceof DnsError) throw err;
    throw new DnsError('SKIFF_ERR_DNS_PUBLISH', { namespace, name, detail: errorMessage(err) }, { cause: err });
  }
}

async function ensureService(client: ApiClient, serviceIP: string, port: number, logger: Logger): Promise<boolean> {
  const ports: ServicePort[] = [
    { name: 'dns', port: DNS_PORT, protocol: 'UDP', targetPort: port },
    { name: 'dns-tcp', port: DNS_PORT, protocol: 'TCP', targetPort: port },
  ];
  const labels = { ...KUBE_DNS.labels };
  const stored = await find<Service>(client, SERVICES, name);
  if (!stored) {
    try {
      await client.create<Service>(
        SERVICES,
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace, labels },
          spec: { type: 'ClusterIP', clusterIP: serviceIP, clusterIPs: [serviceIP], ports },
        },
        namespace,
      );
      return true;
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
      return ensureService(client, serviceIP, port, logger);
    }
  }
  if (stored.spec?.selector && Object.keys(stored.spec.selector).length > 0) {
    logger.warn({ service: `${namespace}/${name}` }, 'the kube-dns Service has a selector (another DNS server runs): it is left alone');
    return false;
  }
  if (stored.spec?.clusterIP !== serviceIP)
    logger.warn(
      { service: `${namespace}/${name}`, clusterIP: stored.spec?.clusterIP, serviceIP },
      'the kube-dns Service has another ClusterIP (it cannot change): pods are told serviceIP',
    );
  const storedLabels = stored.metadata.labels ?? {};
  const labelsMatch = Object.entries(labels).every(([key, value]) => storedLabels[key] === value);
  const portsMatch = same(
    (stored.spec?.ports ?? []).map(({ name: portName, port: number, protocol, targetPort }) => ({ name: portName, port: number, protocol, targetPort })),
    ports,
  );
  if (!labelsMatch || !portsMatch) {
    await client.update<Service>(SERVICES, {
      ...{},
      ...stored,
      metadata: { ...{}, ...stored.metadata, labels: { ...{}, ...storedLabels, ...labels } },
      spec: { ...{}, ...stored.spec, ports },
    });
  }
  return true;
}

async function ensureSlice(client: ApiClient, address: string, port: number): Promise<void> {
  const content: Pick<EndpointSlice, 'addressType' | 'endpoints' | 'ports'> = {
    addressType: isIPv6(address) ? 'IPv6' : 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true, serving: true, terminating: false } }],
    ports: [
      { name: 'dns', port, protocol: 'UDP' },
      { name: 'dns-tcp', port, protocol: 'TCP' },
    ],
  };
  const labels = { [LABEL_SERVICE_NAME]: name, [LABEL_MANAGED_BY]: MANAGED_BY };
  const stored = await find<EndpointSlice>(client, ENDPOINT_SLICES, sliceName);
  if (!stored) {
    try {
      await client.create<EndpointSlice>(
        ENDPOINT_SLICES,
        { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: sliceName, namespace, labels }, ...content },
        namespace,
      );
      return;
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
      return ensureSlice(client, address, port);
    }
  }
  const storedLabels = stored.metadata.labels ?? {};
  const labelsMatch = Object.entries(labels).every(([key, value]) => storedLabels[key] === value);
  if (!labelsMatch || stored.addressType !== content.addressType || !same(stored.endpoints, content.endpoints) || !same(stored.ports, content.ports)) {
    await client.update<EndpointSlice>(ENDPOINT_SLICES, {
      ...{},
      ...stored,
      ...content,
      metadata: { ...{}, ...stored.metadata, labels: { ...{}, ...storedLabels, ...labels } },
    });
  }
}
