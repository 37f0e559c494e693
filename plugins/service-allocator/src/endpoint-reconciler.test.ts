import { isApiError, RESOURCES, type Endpoints, type EndpointSlice, type Lease } from '@skiff/api';
import { createLoopbackClient } from '@skiff/client';
import type { ApiClient } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointLeaseName, LeaseEndpointReconciler } from './endpoint-reconciler.js';
import serviceAllocator from './index.js';
import { APISERVER_USER } from './names.js';

/** Short leases so that an expiry takes seconds: 3 s leases renewed every second (a busy machine may stall a renewal), deleted 1 s after expiry. */
// 'lease' by name: this plane's store is LMDB, on which 'auto' keeps one address and no lease.
const SHORT_LEASES = { type: 'lease', leaseDurationSeconds: 3, renewIntervalSeconds: 1, expiredLeaseGraceSeconds: 1 } as const;

async function endpointAddresses(client: ApiClient): Promise<string[]> {
  const endpoints = await client.get<Endpoints>(RESOURCES.endpoints, 'kubernetes', 'default');
  return (endpoints.subsets ?? []).flatMap((subset) => (subset.addresses ?? []).map((address) => address.ip));
}

async function sliceAddresses(client: ApiClient): Promise<string[]> {
  const slice = await client.get<EndpointSlice>(RESOURCES.endpointslices, 'kubernetes', 'default');
  return (slice.endpoints ?? []).flatMap((endpoint) => endpoint.addresses);
}

async function lease(client: ApiClient, name: string): Promise<Lease | undefined> {
  try {
    return await client.get<Lease>(RESOURCES.leases, name, 'kube-system');
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

describe('the lease endpoint reconciler: API servers sharing one store', () => {
  let plane: ControlPlane;
  let port: number;
  let apiServer: ApiClient;
  const started: LeaseEndpointReconciler[] = [];

  /** Another API server's reconciler, as it would run in that server, writing through this one. */
  async function startPeer(address: string): Promise<LeaseEndpointReconciler> {
    const reconciler = new LeaseEndpointReconciler({ client: apiServer, address, port, ...SHORT_LEASES, logger: plane.kernel.logger });
    await reconciler.start();
    started.push(reconciler);
    return reconciler;
  }

  beforeAll(async () => {
    plane = await startControlPlane([[serviceAllocator, { repairIntervalMs: 60_000, endpointReconciler: SHORT_LEASES }]]);
    port = plane.kernel.resolve('apiServerInfo').port;
    apiServer = createLoopbackClient(plane.kernel.resolve('apiHandler'), APISERVER_USER);
  });
  afterAll(async () => {
    for (const reconciler of started) await reconciler.halt();
    await plane?.stop();
  });

  it('gives the API server a lease of its own naming its address and port', async () => {
    const own = await lease(plane.client, endpointLeaseName('127.0.0.1', port));
    expect(own?.metadata.labels).toEqual({ 'apiserver.kubernetes.io/identity': 'kube-apiserver', 'skiff.dev/endpoint-reconciler': 'lease' });
    expect(own?.metadata.annotations).toEqual({ 'skiff.dev/advertise-address': '127.0.0.1', 'skiff.dev/advertise-port': String(port) });
    expect(own?.spec).toMatchObject({ holderIdentity: endpointLeaseName('127.0.0.1', port), leaseDurationSeconds: 3 });
    expect(await endpointAddresses(plane.client)).toEqual(['127.0.0.1']);
    // Renewed: renewTime moves on.
    const renewTime = own!.spec!.renewTime;
    await waitFor('a renewal', async () => (await lease(plane.client, own!.metadata.name!))!.spec!.renewTime !== renewTime);
  });

  it('lists every live API server, in address order, and drops one that died once its lease expires', async () => {
    await startPeer('127.0.0.10');
    const dying = await startPeer('127.0.0.9');
    expect(await endpointAddresses(plane.client)).toEqual(['127.0.0.1', '127.0.0.9', '127.0.0.10']);
    expect(await sliceAddresses(plane.client)).toEqual(['127.0.0.1', '127.0.0.9', '127.0.0.10']);
    const endpoints = await plane.client.get<Endpoints>(RESOURCES.endpoints, 'kubernetes', 'default');
    expect(endpoints.subsets).toEqual([
      { addresses: [{ ip: '127.0.0.1' }, { ip: '127.0.0.9' }, { ip: '127.0.0.10' }], ports: [{ name: 'https', port, protocol: 'TCP' }] },
    ]);

    // Dies: no more renewals, the lease stays behind.
    await dying.halt();
    const left = (await lease(plane.client, dying.leaseName))!;
    const expiry = Date.parse(left.spec!.renewTime!) + 3_000;
    // The Endpoints are written before the EndpointSlice: wait for both.
    await waitFor('the dead server to leave the endpoints', async () => !(await sliceAddresses(plane.client)).includes('127.0.0.9'));
    expect(Date.now()).toBeGreaterThanOrEqual(expiry);
    expect(await endpointAddresses(plane.client)).toEqual(['127.0.0.1', '127.0.0.10']);
    expect(await sliceAddresses(plane.client)).toEqual(['127.0.0.1', '127.0.0.10']);
    // Expired for longer than the grace: deleted by the servers still alive.
    await waitFor('the expired lease to be deleted', async () => !(await lease(plane.client, dying.leaseName)));
  });

  it('drops a server that stops gracefully at once, and takes back one that comes back', async () => {
    const leaving = await startPeer('127.0.0.20');
    expect(await endpointAddresses(plane.client)).toEqual(['127.0.0.1', '127.0.0.10', '127.0.0.20']);
    await leaving.stop();
    expect(await lease(plane.client, leaving.leaseName)).toBeUndefined();
    expect(await endpointAddresses(plane.client)).toEqual(['127.0.0.1', '127.0.0.10']);
    expect(await sliceAddresses(plane.client)).toEqual(['127.0.0.1', '127.0.0.10']);

    const back = await startPeer('127.0.0.20');
    expect(back.leaseName).toBe(leaving.leaseName);
    expect(await endpointAddresses(plane.client)).toEqual(['127.0.0.1', '127.0.0.10', '127.0.0.20']);
  });

  it('puts back endpoints someone else changed on the next renewal', async () => {
    const endpoints = await plane.client.get<Endpoints>(RESOURCES.endpoints, 'kubernetes', 'default');
    await plane.client.update<Endpoints>(RESOURCES.endpoints, {
      ...endpoints,
      subsets: [{ addresses: [{ ip: '10.1.2.3' }], ports: [{ name: 'https', port }] }],
    });
    await waitFor('the endpoints to be reconciled', async () => (await endpointAddresses(plane.client)).join() === '127.0.0.1,127.0.0.10,127.0.0.20');
  });
});

describe('the kubernetes endpoints of one API server', () => {
  it('are its address alone (a lease only when asked for: LMDB has one API server), empty once it stopped gracefully; type none leaves them alone', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'skiff-endpoint-reconciler-'));
    try {
      // 'auto' on LMDB: this server's address, no lease to renew.
      let plane = await startControlPlane([serviceAllocator], { dataDir });
      let port = plane.kernel.resolve('apiServerInfo').port;
      expect(await endpointAddresses(plane.client)).toEqual(['127.0.0.1']);
      expect(await sliceAddresses(plane.client)).toEqual(['127.0.0.1']);
      expect(await lease(plane.client, endpointLeaseName('127.0.0.1', port))).toBeUndefined();
      await plane.stop();

      plane = await startControlPlane([[serviceAllocator, { endpointReconciler: { type: 'lease' } }]], { dataDir });
      port = plane.kernel.resolve('apiServerInfo').port;
      expect(await endpointAddresses(plane.client)).toEqual(['127.0.0.1']);
      expect((await lease(plane.client, endpointLeaseName('127.0.0.1', port)))?.spec?.leaseDurationSeconds).toBe(15);
      await plane.stop();

      plane = await startControlPlane([[serviceAllocator, { endpointReconciler: { type: 'none' } }]], { dataDir });
      try {
        expect(await endpointAddresses(plane.client)).toEqual([]);
        expect(await sliceAddresses(plane.client)).toEqual([]);
        const { items } = await plane.client.list<Lease>(RESOURCES.leases, 'kube-system', { labelSelector: 'skiff.dev/endpoint-reconciler=lease' });
        expect(items).toEqual([]);
      } finally {
        await plane.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a renewal interval as long as the lease', async () => {
    await expect(
      startControlPlane([[serviceAllocator, { endpointReconciler: { leaseDurationSeconds: 5, renewIntervalSeconds: 5 } }]], { config: { logLevel: 'silent' } }),
    ).rejects.toThrow('option "endpointReconciler.renewIntervalSeconds": must be less than leaseDurationSeconds (5), got 5');
  });
});
