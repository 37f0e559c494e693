import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type Endpoints, type Pod, type Service, type ServicePort } from '@skiff/api';
import kubelet from '@skiff/kubelet';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import endpointsController from './index.js';

// Pods come in two kinds here: those the test binds to `node-x` and reports on itself (no kubelet runs
// there), and those the scheduler places on the simulated kubelets' nodes.

let plane: ControlPlane;
beforeAll(async () => {
  plane = await startControlPlane([endpointsController, scheduler, resourcesFit, [kubelet, { heartbeatSeconds: 1 }], criSimulated, networkIpam], {
    config: { nodes: 1, logLevel: 'silent' },
  });
});
afterAll(async () => {
  await plane?.stop();
});

const ns = 'default';

async function createService(name: string, options: { ports?: ServicePort[]; selector?: Record<string, string> | null; labels?: Record<string, string> } = {}) {
  const selector = options.selector === undefined ? { app: name } : options.selector;
  return plane.client.create<Service>(
    RESOURCES.services,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, ...(options.labels ? { labels: options.labels } : {}) },
      spec: { ...(selector ? { selector } : {}), ports: options.ports ?? [{ name: 'http', port: 80, targetPort: 8080 }] },
    },
    ns,
  );
}

async function createReportedPod(name: string, app: string, ip: string, ready: boolean): Promise<void> {
  const pod = await plane.client.create<Pod>(
    RESOURCES.pods,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app } }, spec: { nodeName: 'node-x', containers: [{ name: 'c', image: 'nginx' }] } },
    ns,
  );
  await setReady(pod, ready, ip);
}

async function setReady(pod: Pod, ready: boolean, ip = pod.status?.podIP): Promise<void> {
  const fresh = await plane.client.get<Pod>(RESOURCES.pods, pod.metadata.name!, ns);
  await plane.client.updateStatus<Pod>(RESOURCES.pods, {
    ...fresh,
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip: ip! }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
}

const getEndpoints = (name: string) => plane.client.get<Endpoints>(RESOURCES.endpoints, name, ns);

/** `ready` and `not ready` pod names of a Service's Endpoints. */
async function members(name: string): Promise<{ ready: string[]; notReady: string[] }> {
  const endpoints = await getEndpoints(name);
  const names = (field: 'addresses' | 'notReadyAddresses') =>
    (endpoints.subsets ?? [])
      .flatMap((s) => s[field] ?? [])
      .map((a) => a.targetRef!.name!)
      .sort();
  return { ready: names('addresses'), notReady: names('notReadyAddresses') };
}

const membersAre = (name: string, expected: { ready: string[]; notReady: string[] }) => async () => {
  const actual = await members(name);
  return JSON.stringify(actual) === JSON.stringify(expected) ? actual : undefined;
};

describe('Endpoints controller against a real API server', () => {
  it('creates Endpoints named like the Service, and moves pods between ready and not ready', async () => {
    await createService('web', { labels: { tier: 'front' } });
    await createReportedPod('web-1', 'web', '10.250.0.1', true);
    await createReportedPod('web-2', 'web', '10.250.0.2', false);
    await waitFor('web-1 ready, web-2 not', membersAre('web', { ready: ['web-1'], notReady: ['web-2'] }));
    const endpoints = await getEndpoints('web');
    expect(endpoints.metadata.labels).toEqual({ tier: 'front', 'service.kubernetes.io/headless': '', 'endpointslice.kubernetes.io/skip-mirror': 'true' });
    expect(endpoints.subsets).toEqual([
      {
        addresses: [{ ip: '10.250.0.1', nodeName: 'node-x', targetRef: expect.objectContaining({ kind: 'Pod', namespace: 'default', name: 'web-1' }) }],
        notReadyAddresses: [{ ip: '10.250.0.2', nodeName: 'node-x', targetRef: expect.objectContaining({ kind: 'Pod', namespace: 'default', name: 'web-2' }) }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ]);

    await setReady(await plane.client.get<Pod>(RESOURCES.pods, 'web-2', ns), true);
    await waitFor('both ready', membersAre('web', { ready: ['web-1', 'web-2'], notReady: [] }));
    // Deleting a bound pod leaves it terminating (no kubelet runs on node-x): it leaves the Endpoints at once.
    await plane.client.delete(RESOURCES.pods, 'web-1', ns);
    await waitFor('web-1 gone', membersAre('web', { ready: ['web-2'], notReady: [] }));
  });

  it('recreates Endpoints deleted behind its back, and deletes them with the Service', async () => {
    await createService('again');
    await createReportedPod('again-1', 'again', '10.250.1.1', true);
    await waitFor('again-1 listed', membersAre('again', { ready: ['again-1'], notReady: [] }));
    const first = await getEndpoints('again');
    await plane.client.delete(RESOURCES.endpoints, 'again', ns);
    const second = await waitFor('recreated', async () => {
      const endpoints = await getEndpoints('again');
      return endpoints.metadata.uid !== first.metadata.uid && endpoints;
    });
    expect(second.subsets).toEqual(first.subsets);
    await plane.client.delete(RESOURCES.services, 'again', ns);
    await waitFor('Endpoints deleted', async () => {
      try {
        await getEndpoints('again');
        return false;
      } catch {
        return true;
      }
    });
  });

  it('leaves the Endpoints of a Service without a selector as their author wrote them', async () => {
    await createService('external', { selector: null, ports: [{ port: 5432 }] });
    const manual: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'external' },
      subsets: [{ addresses: [{ ip: '192.0.2.7' }], ports: [{ port: 5432 }] }],
    };
    await plane.client.create<Endpoints>(RESOURCES.endpoints, manual, ns);
    // A Service with a selector created afterwards is handled; by then the selector-less one was too.
    await createService('marker');
    await waitFor('marker Endpoints', () => getEndpoints('marker'));
    expect((await getEndpoints('external')).subsets).toEqual(manual.subsets);
  });

  it('lists the pods a kubelet runs, with the IPs it gave them', async () => {
    await createService('echo');
    for (const name of ['echo-1', 'echo-2']) {
      await plane.client.create<Pod>(
        RESOURCES.pods,
        { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'echo' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        ns,
      );
    }
    await waitFor('both ready', membersAre('echo', { ready: ['echo-1', 'echo-2'], notReady: [] }), { timeoutMs: 15_000 });
    const pods = (await plane.client.list<Pod>(RESOURCES.pods, ns, { labelSelector: 'app=echo' })).items;
    const ips = (await getEndpoints('echo')).subsets!.flatMap((s) => s.addresses ?? []).map((a) => a.ip);
    expect(ips.sort()).toEqual(pods.map((pod) => pod.status!.podIP).sort());
  });
});

describe('Endpoints controller at start', () => {
  it('deletes Endpoints whose Service went while it was not running, but not leader-election locks', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-endpoints-'));
    try {
      const before = await startControlPlane([], { dataDir, config: { logLevel: 'silent' } });
      const leftover: Endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'leftover' }, subsets: [{ addresses: [{ ip: '192.0.2.1' }] }] };
      const lock: Endpoints = {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'lock', annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' } },
      };
      await before.client.create<Endpoints>(RESOURCES.endpoints, leftover, ns);
      await before.client.create<Endpoints>(RESOURCES.endpoints, lock, ns);
      await before.stop();

      const after = await startControlPlane([endpointsController], { dataDir, config: { logLevel: 'silent' } });
      try {
        await waitFor(
          'leftover deleted',
          async () => !(await after.client.list<Endpoints>(RESOURCES.endpoints, ns)).items.some((e) => e.metadata.name === 'leftover'),
        );
        expect((await after.client.list<Endpoints>(RESOURCES.endpoints, ns)).items.map((e) => e.metadata.name)).toEqual(['lock']);
      } finally {
        await after.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
