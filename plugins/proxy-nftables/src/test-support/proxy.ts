import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type EndpointSlice, type Service } from '@skiff/api';
import { Kernel, recordingLogger, type ApiClient, type LogRecord, type ServiceProxy, type ServiceProxyFactory } from '@skiff/kernel';
import plugin from '../index.js';

/** The plugin's factory as a kubelet gets it, from the serviceProxies hook. */
export function proxyFactory(options: Record<string, unknown>): ServiceProxyFactory {
  const factories: ServiceProxyFactory[] = [];
  new Kernel({ config: { logLevel: 'silent' } })
    .use(plugin, options)
    .hooks.serviceProxies.call({ register: (f) => void factories.push(f), get: () => undefined, list: () => factories });
  return factories[0]!;
}

/** Creates the proxy for one node, as a kubelet would (minus the loopback identity); `records` collects its logs. */
export async function startProxy(
  factory: ServiceProxyFactory,
  client: ApiClient,
  node: { name: string; ips: string[] },
  records: LogRecord[] = [],
): Promise<ServiceProxy> {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-proxy-test-'));
  try {
    return await factory.create({ nodeName: node.name, index: 0, dataDir, logger: recordingLogger(records), nodeIPs: node.ips, client });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export interface TestEndpoint {
  ip: string;
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface TestPort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port: number;
  targetPort: number;
  nodePort?: number;
}

export function serviceObject(name: string, clusterIP: string, ports: TestPort[], spec: Record<string, unknown> = {}): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ports: ports.map(({ targetPort, ...port }) => ({ protocol: 'TCP', ...port, targetPort })),
      ...spec,
    },
  } as Service;
}

export function sliceObject(service: string, ports: TestPort[], endpoints: TestEndpoint[], suffix = 'a'): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${suffix}`,
      namespace: 'default',
      labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'test' },
    },
    addressType: 'IPv4',
    ports: ports.map((port) => ({ ...(port.name ? { name: port.name } : {}), protocol: port.protocol ?? 'TCP', port: port.targetPort })),
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true, serving: e.serving ?? e.ready ?? true, terminating: e.terminating ?? false },
      ...(e.node ? { nodeName: e.node } : {}),
    })),
  };
}

/** Creates a selector-less Service and its slice. */
export async function publish(client: ApiClient, service: Service, slice: EndpointSlice): Promise<void> {
  await client.create(RESOURCES.services, service);
  await client.create(RESOURCES.endpointslices, slice);
}

export async function replaceSlice(client: ApiClient, slice: EndpointSlice): Promise<void> {
  const current = await client.get<EndpointSlice>(RESOURCES.endpointslices, slice.metadata.name!, slice.metadata.namespace);
  await client.update(RESOURCES.endpointslices, { ...slice, metadata: { ...slice.metadata, resourceVersion: current.metadata.resourceVersion } });
}
