import { isApiError, RESOURCES, type Endpoints, type EndpointSlice, type IPAddress, type Service, type ResourceTypes, type ServiceSpec } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoopbackClient } from '@skiff/client';
import serviceAllocator from './index.js';
import { ServiceAllocator } from './allocator.js';
import { IPAddressClient } from './ip-addresses.js';
import { PortRange } from './node-ports.js';
import { repair } from './repair.js';
import { APISERVER_USER } from './names.js';
import { ServiceCIDR } from './cidr.js';

const range = new ServiceCIDR('10.96.0.0/12');

function service(name: string, spec: ServiceSpec = {}): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { ports: [{ port: 80 }], selector: { app: name }, ...spec } };
}

async function create(client: ApiClient, name: string, spec?: ServiceSpec): Promise<Service> {
  return client.create<Service>(RESOURCES.services, service(name, spec), 'default');
}

async function failure(promise: Promise<unknown>): Promise<{ status?: number; message: string }> {
  const err = await promise.then(
    () => undefined,
    (e: Error & { status?: number }) => e,
  );
  if (!err) throw new Error('expected the request to fail');
  return { status: err.status, message: err.message };
}

async function address(client: ApiClient, ip: string): Promise<IPAddress | undefined> {
  try {
    return await client.get<IPAddress>(RESOURCES.ipaddresses, ip);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

describe('service allocation against a real API server', () => {
  let plane: ControlPlane;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'skiff-service-allocator-'));
    plane = await startControlPlane([[serviceAllocator, { nodePortRange: '30000-30099', repairIntervalMs: 200 }]], { dataDir });
  });
  afterAll(async () => {
    await plane?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates the kubernetes ServiceCIDR, Ready, and the kubernetes Service with its endpoints', async () => {
    const { client } = plane;
    const cidr = await client.get<ResourceTypes['servicecidrs.networking.k8s.io']>(RESOURCES.servicecidrs, 'kubernetes');
    expect(cidr.spec?.cidrs).toEqual(['10.96.0.0/12']);
    expect(cidr.status?.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True', message: 'Kubernetes default Service CIDR is ready' })]);

    const port = plane.kernel.resolve('apiServerInfo').port;
    const kubernetes = await client.get<Service>(RESOURCES.services, 'kubernetes', 'default');
    expect(kubernetes.spec).toMatchObject({
      type: 'ClusterIP',
      clusterIP: '10.96.0.1',
      clusterIPs: ['10.96.0.1'],
      ports: [{ name: 'https', port: 443, targetPort: port, protocol: 'TCP' }],
    });
    expect((await address(client, '10.96.0.1'))?.spec?.parentRef).toEqual({ group: '', resource: 'services', namespace: 'default', name: 'kubernetes' });
    const endpoints = await client.get<Endpoints>(RESOURCES.endpoints, 'kubernetes', 'default');
    expect(endpoints.subsets).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port, protocol: 'TCP' }] }]);
    const slice = await client.get<EndpointSlice>(RESOURCES.endpointslices, 'kubernetes', 'default');
    expect(slice.metadata.labels).toEqual({ 'kubernetes.io/service-name': 'kubernetes' });
    expect(slice).toMatchObject({
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    });
  });

  it('gives a created Service a cluster IP in the response, recorded as an IPAddress', async () => {
    const { client } = plane;
    const created = await create(client, 'web');
    const ip = created.spec!.clusterIP!;
    expect(range.contains(ip)).toBe(true);
    expect(created.spec).toMatchObject({ clusterIPs: [ip], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
    const recorded = await address(client, ip);
    expect(recorded?.metadata.labels).toEqual({ 'ipaddress.kubernetes.io/ip-family': 'IPv4', 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' });
    expect(recorded?.spec?.parentRef).toEqual({ group: '', resource: 'services', namespace: 'default', name: 'web' });
  });

  it('honours a requested cluster IP and refuses one that is taken or out of range', async () => {
    const { client } = plane;
    expect((await create(client, 'fixed', { clusterIP: '10.96.0.10' })).spec?.clusterIPs).toEqual(['10.96.0.10']);
    expect(await failure(create(client, 'clash', { clusterIP: '10.96.0.10' }))).toEqual({
      status: 422,
      message: 'Service "clash" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated',
    });
    expect((await failure(create(client, 'outside', { clusterIP: '10.0.0.1' }))).message).toBe(
      'Service "outside" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.1"]: failed to allocate IP 10.0.0.1: the provided network does not match the current range',
    );
    expect((await failure(create(client, 'v6', { clusterIP: 'fd00::1' }))).message).toBe(
      'Service "v6" is invalid: spec.clusterIPs[0]: Invalid value: ["fd00::1"]: IPv6 is not configured on this cluster',
    );
  });

  it('keeps the cluster IP: an update that changes it is refused, one that leaves it out keeps it', async () => {
    const { client } = plane;
    const created = await create(client, 'steady');
    expect((await failure(client.patch(RESOURCES.services, 'steady', { spec: { clusterIP: '10.96.0.99' } }, { namespace: 'default' }))).message).toBe(
      'Service "steady" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.99"]: may not change once set',
    );
    const replaced = await client.update<Service>(RESOURCES.services, { ...service('steady'), metadata: { ...created.metadata } });
    expect(replaced.spec?.clusterIPs).toEqual(created.spec?.clusterIPs);
  });

  it('gives headless and ExternalName Services no address', async () => {
    const { client } = plane;
    expect((await create(client, 'headless', { clusterIP: 'None' })).spec).toMatchObject({ clusterIP: 'None', clusterIPs: ['None'], ipFamilies: ['IPv4'] });
    const external = await client.create<Service>(
      RESOURCES.services,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'example.com' } },
      'default',
    );
    expect(external.spec?.clusterIP).toBeUndefined();
    expect(external.spec?.ipFamilies).toBeUndefined();
  });

  it('frees the address of a deleted Service, and of a create that failed', async () => {
    const { client } = plane;
    const ip = (await create(client, 'brief')).spec!.clusterIP!;
    await client.delete(RESOURCES.services, 'brief', 'default');
    await waitFor('the IPAddress to go', async () => !(await address(client, ip)));
    expect((await create(client, 'reuse', { clusterIP: ip })).spec?.clusterIP).toBe(ip);

    // Admission hands out 10.96.0.20, then validation refuses the Service: the address comes back.
    const invalid = service('broken', { clusterIP: '10.96.0.20', ports: [{ port: 70000 }] });
    expect((await failure(client.create(RESOURCES.services, invalid, 'default'))).status).toBe(422);
    await waitFor('the failed create to give its address back', async () => !(await address(client, '10.96.0.20')));
    expect((await create(client, 'after-broken', { clusterIP: '10.96.0.20' })).spec?.clusterIP).toBe('10.96.0.20');
  });

  it('gives NodePort Services node ports, refuses taken and out-of-range ones, frees them on delete and type change', async () => {
    const { client } = plane;
    const nodePort = await create(client, 'np', {
      type: 'NodePort',
      ports: [
        { name: 'http', port: 80 },
        { name: 'https', port: 443, nodePort: 30010 },
      ],
    });
    const [auto, requested] = nodePort.spec!.ports!;
    expect(auto!.nodePort).toBeGreaterThanOrEqual(30000);
    expect(auto!.nodePort).toBeLessThanOrEqual(30099);
    expect(requested!.nodePort).toBe(30010);
    expect((await failure(create(client, 'np-clash', { type: 'NodePort', ports: [{ port: 80, nodePort: 30010 }] }))).message).toBe(
      'Service "np-clash" is invalid: spec.ports[0].nodePort: Invalid value: 30010: provided port is already allocated',
    );
    expect((await failure(create(client, 'np-out', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] }))).message).toBe(
      'Service "np-out" is invalid: spec.ports[0].nodePort: Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30099',
    );

    await client.delete(RESOURCES.services, 'np', 'default');
    expect((await create(client, 'np-next', { type: 'NodePort', ports: [{ port: 80, nodePort: 30010 }] })).spec?.ports?.[0]?.nodePort).toBe(30010);

    const toClusterIP = await client.patch<Service>(RESOURCES.services, 'np-next', { spec: { type: 'ClusterIP' } }, { namespace: 'default' });
    expect(toClusterIP.spec?.ports?.[0]?.nodePort).toBeUndefined();
    expect((await create(client, 'np-after', { type: 'NodePort', ports: [{ port: 80, nodePort: 30010 }] })).spec?.ports?.[0]?.nodePort).toBe(30010);
  });

  it('gives LoadBalancer Services node ports unless allocateLoadBalancerNodePorts is false', async () => {
    const { client } = plane;
    const lb = await create(client, 'lb', { type: 'LoadBalancer' });
    expect(lb.spec).toMatchObject({ allocateLoadBalancerNodePorts: true });
    expect(lb.spec?.ports?.[0]?.nodePort).toBeGreaterThanOrEqual(30000);
    const bare = await create(client, 'lb-bare', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false });
    expect(bare.spec?.ports?.[0]?.nodePort).toBeUndefined();
  });

  it('hands out unique addresses to Services created at once', async () => {
    const { client } = plane;
    const created = await Promise.all(Array.from({ length: 30 }, (_, i) => create(client, `burst-${i}`)));
    const ips = created.map((s) => s.spec!.clusterIP!);
    expect(new Set(ips).size).toBe(30);
    for (const ip of ips) expect(range.contains(ip)).toBe(true);
  });

  it('leaves a leaked IPAddress for the grace period of a create in flight, then deletes it', async () => {
    const client = createLoopbackClient(plane.kernel.resolve('apiHandler'), APISERVER_USER);
    const addresses = new IPAddressClient(client);
    const logger = plane.kernel.logger;
    const allocator = new ServiceAllocator({ ranges: [range], nodePorts: PortRange.parse('30000-30099'), addresses, lookup: async () => undefined, logger });
    const sources = { listServices: async () => (await client.list<Service>(RESOURCES.services)).items, addresses, logger };
    await addresses.create('10.96.0.77', 'IPv4', { namespace: 'default', name: 'never-made' });
    expect((await repair(allocator, sources, false)).deleted).toEqual([]);
    expect(await address(plane.client, '10.96.0.77')).toBeDefined();
    expect((await repair(allocator, sources, false, () => Date.now() + 61_000)).deleted).toEqual(['10.96.0.77']);
    expect(await address(plane.client, '10.96.0.77')).toBeUndefined();
  });

  it('repairs: recreates a missing IPAddress and deletes one no Service holds', async () => {
    const { client } = plane;
    const ip = (await create(client, 'repaired')).spec!.clusterIP!;
    await client.delete(RESOURCES.ipaddresses, ip);
    await waitFor('the IPAddress to be recreated', async () => (await address(client, ip))?.spec?.parentRef?.name === 'repaired');
  });
});

describe('service allocation across a restart', () => {
  it('keeps allocations of a restarted control plane and never hands them out again', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'skiff-service-allocator-restart-'));
    const options = { nodePortRange: '30000-30004', serviceCIDR: '10.100.0.0/29' };
    try {
      let plane = await startControlPlane([[serviceAllocator, options]], { dataDir });
      // A /29 hands out .1 (kubernetes) to .6: five more addresses.
      const first = await Promise.all(['a', 'b'].map((name) => create(plane.client, name, { type: 'NodePort' })));
      // An IPAddress whose Service is gone, on an address nobody holds: the repair at start deletes it.
      const taken = new Set(first.map((s) => s.spec!.clusterIP));
      const leaked = ['10.100.0.2', '10.100.0.3', '10.100.0.4'].find((ip) => !taken.has(ip))!;
      await plane.client.create<IPAddress>(RESOURCES.ipaddresses, {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'IPAddress',
        metadata: { name: leaked, labels: { 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io', 'ipaddress.kubernetes.io/ip-family': 'IPv4' } },
        spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'gone' } },
      });
      await plane.stop();

      plane = await startControlPlane([[serviceAllocator, options]], { dataDir });
      try {
        expect(await address(plane.client, leaked)).toBeUndefined();
        const later = await Promise.all(['c', 'd', 'e'].map((name) => create(plane.client, name, { type: 'NodePort' })));
        const ips = [...first, ...later].map((s) => s.spec!.clusterIP);
        expect(new Set([...ips, '10.100.0.1']).size).toBe(6);
        const ports = [...first, ...later].map((s) => s.spec!.ports![0]!.nodePort);
        expect(new Set(ports).size).toBe(5);
        expect((await failure(create(plane.client, 'f', { type: 'NodePort' }))).message).toBe(
          'Internal error occurred: failed to allocate a serviceIP: range is full',
        );
      } finally {
        await plane.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
