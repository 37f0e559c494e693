import { RESOURCES, type Endpoints, type EndpointSlice, type Event, type Service } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mirroringController from './index.js';

let plane: ControlPlane;
beforeAll(async () => {
  plane = await startControlPlane([[mirroringController, { maxEndpointsPerSubset: 3 }]], { config: { logLevel: 'silent' } });
});
afterAll(async () => {
  await plane?.stop();
});

const ns = 'default';

async function createService(name: string, selector?: Record<string, string>): Promise<Service> {
  return plane.client.create<Service>(
    RESOURCES.services,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { ...(selector ? { selector } : {}), ports: [{ name: 'example', port: 80, protocol: 'TCP' }] },
    },
    ns,
  );
}

async function createEndpoints(name: string, subsets: Endpoints['subsets'], metadata: Partial<Endpoints['metadata']> = {}): Promise<Endpoints> {
  return plane.client.create<Endpoints>(RESOURCES.endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, ...metadata }, subsets }, ns);
}

const slicesOf = async (service: string) =>
  (await plane.client.list<EndpointSlice>(RESOURCES.endpointslices, ns, { labelSelector: `kubernetes.io/service-name=${service}` })).items;

/** Waits until the Service's slices, reduced to their address type, ports and addresses, are `expected`. */
function slicesAre(service: string, expected: { type: string; ports: number[]; addresses: string[] }[]) {
  return waitFor(`${service} slices ${JSON.stringify(expected)}`, async () => {
    const slices = await slicesOf(service);
    const seen = slices
      .map((slice) => ({
        type: slice.addressType,
        ports: (slice.ports ?? []).map((port) => port.port!).sort(),
        addresses: (slice.endpoints ?? []).flatMap((endpoint) => endpoint.addresses).sort(),
      }))
      .sort((a, b) => a.type.localeCompare(b.type) || a.ports.join().localeCompare(b.ports.join()));
    return JSON.stringify(seen) === JSON.stringify(expected) && slices;
  });
}

describe('EndpointSlice mirroring controller against a real API server', () => {
  it('mirrors a custom Endpoints object through create, update and delete', async () => {
    await createService('example-custom-endpoints');
    const endpoints = await createEndpoints('example-custom-endpoints', [{ ports: [{ port: 80 }], addresses: [{ ip: '10.1.2.3' }] }], {
      labels: { team: 'db' },
      annotations: { note: 'copied' },
    });
    const [slice] = await slicesAre('example-custom-endpoints', [{ type: 'IPv4', ports: [80], addresses: ['10.1.2.3'] }]);
    expect(slice!.metadata.name).toMatch(/^example-custom-endpoints-/);
    expect(slice!.metadata.labels).toEqual({
      team: 'db',
      'kubernetes.io/service-name': 'example-custom-endpoints',
      'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io',
    });
    expect(slice!.metadata.annotations).toEqual({ note: 'copied' });
    expect(slice!.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Endpoints', name: 'example-custom-endpoints', uid: endpoints.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(slice!.endpoints).toEqual([{ addresses: ['10.1.2.3'], conditions: { ready: true } }]);

    const current = await plane.client.get<Endpoints>(RESOURCES.endpoints, 'example-custom-endpoints', ns);
    await plane.client.update<Endpoints>(RESOURCES.endpoints, { ...current, subsets: [{ ports: [{ port: 80 }], addresses: [{ ip: '10.2.3.4' }] }] });
    const [updated] = await slicesAre('example-custom-endpoints', [{ type: 'IPv4', ports: [80], addresses: ['10.2.3.4'] }]);
    // Rewritten in place, not replaced.
    expect(updated!.metadata.uid).toBe(slice!.metadata.uid);

    await plane.client.delete(RESOURCES.endpoints, 'example-custom-endpoints', ns);
    await slicesAre('example-custom-endpoints', []);
  });

  it('mirrors multiple subsets with the same address as one slice with both ports, and splits address families', async () => {
    await createService('multi');
    await createEndpoints('multi', [
      { ports: [{ name: 'port80', port: 8090 }], addresses: [{ ip: '10.3.0.1' }, { ip: 'fd00::1' }] },
      { ports: [{ name: 'port81', port: 9090 }], addresses: [{ ip: '10.3.0.1' }, { ip: 'fd00::1' }] },
    ]);
    await slicesAre('multi', [
      { type: 'IPv4', ports: [8090, 9090], addresses: ['10.3.0.1'] },
      { type: 'IPv6', ports: [8090, 9090], addresses: ['fd00::1'] },
    ]);
  });

  it('caps each subset at maxEndpointsPerSubset, ready addresses first, and says so in an event', async () => {
    await createService('many');
    await createEndpoints('many', [
      {
        ports: [{ port: 5432 }],
        addresses: [{ ip: '10.4.0.1' }, { ip: '10.4.0.2' }, { ip: '10.4.0.3' }],
        notReadyAddresses: [{ ip: '10.4.0.4' }],
      },
    ]);
    await slicesAre('many', [{ type: 'IPv4', ports: [5432], addresses: ['10.4.0.1', '10.4.0.2', '10.4.0.3'] }]);
    await waitFor('TooManyAddressesToMirror event', async () => {
      const events = await plane.client.list<Event>(RESOURCES.events, ns, { fieldSelector: 'involvedObject.name=many' });
      return events.items.some((event) => event.reason === 'TooManyAddressesToMirror' && event.involvedObject.kind === 'Endpoints');
    });
  });

  it('leaves Endpoints marked skip-mirror and those of Services with a selector alone, and follows a selector that goes', async () => {
    await createService('skipped');
    await createEndpoints('skipped', [{ ports: [{ port: 80 }], addresses: [{ ip: '10.5.0.1' }] }], {
      labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
    });
    await createService('selecting', { app: 'selecting' });
    await createEndpoints('selecting', [{ ports: [{ port: 80 }], addresses: [{ ip: '10.5.0.2' }] }]);
    // A mirrored marker created afterwards shows the controller has been through the queue since.
    await createService('marker');
    await createEndpoints('marker', [{ ports: [{ port: 80 }], addresses: [{ ip: '10.5.0.3' }] }]);
    await slicesAre('marker', [{ type: 'IPv4', ports: [80], addresses: ['10.5.0.3'] }]);
    expect(await slicesOf('skipped')).toEqual([]);
    expect(await slicesOf('selecting')).toEqual([]);

    await plane.client.patch<Service>(RESOURCES.services, 'selecting', { spec: { selector: null } }, { namespace: ns });
    await slicesAre('selecting', [{ type: 'IPv4', ports: [80], addresses: ['10.5.0.2'] }]);
    // The Service going takes the slices with it, though its Endpoints stay.
    await plane.client.delete(RESOURCES.services, 'selecting', ns);
    await slicesAre('selecting', []);
    expect((await plane.client.get<Endpoints>(RESOURCES.endpoints, 'selecting', ns)).subsets).toHaveLength(1);
  });
});
