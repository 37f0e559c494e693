import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The EndpointSlice and Endpoints controllers in a real `skiff up`, driven by the real kubectl 1.36: a
// Deployment behind a Service, scaled up, scaled down and deleted, while the slices and the Endpoints follow
// its ready pods. Then, with the official JavaScript client watching pods and slices, how long after a pod
// turns ready its endpoint shows up.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('endpoints');
const cacheDir = tempDir('endpoints-cache');
let skiff: RunningSkiff;
const { ok, json } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

/** IPs of the Deployment's pods that are Ready and not being deleted, sorted. */
async function readyPodIPs(app: string): Promise<string[]> {
  const list = await json('get', 'pods', '-l', `app=${app}`);
  return (list.items as any[])
    .filter((pod) => !pod.metadata.deletionTimestamp && pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'))
    .map((pod) => pod.status.podIP as string)
    .sort();
}

interface SliceView {
  ready: string[];
  other: number;
  slices: any[];
}

async function sliceView(service: string): Promise<SliceView> {
  const list = await json('get', 'endpointslices', '-l', `kubernetes.io/service-name=${service}`);
  const endpoints = (list.items as any[]).flatMap((slice) => slice.endpoints ?? []);
  return {
    ready: endpoints
      .filter((e) => e.conditions?.ready)
      .map((e) => e.addresses[0] as string)
      .sort(),
    other: endpoints.filter((e) => !e.conditions?.ready).length,
    slices: list.items,
  };
}

async function endpointsView(service: string): Promise<{ ready: string[]; notReady: number; object: any }> {
  const object = await json('get', 'endpoints', service);
  const subsets = (object.subsets ?? []) as any[];
  return {
    ready: subsets
      .flatMap((s) => s.addresses ?? [])
      .map((a: any) => a.ip as string)
      .sort(),
    notReady: subsets.flatMap((s) => s.notReadyAddresses ?? []).length,
    object,
  };
}

/** Waits until `count` pods are ready and both the slices and the Endpoints list exactly their IPs, nothing else. */
async function settle(app: string, count: number): Promise<string[]> {
  return waitFor(
    `${count} ready pods listed by the EndpointSlices and the Endpoints of ${app}`,
    async () => {
      const ips = await readyPodIPs(app);
      if (ips.length !== count) return undefined;
      const slices = await sliceView(app);
      const endpoints = await endpointsView(app);
      const same = (a: string[]) => JSON.stringify(a) === JSON.stringify(ips);
      return same(slices.ready) && slices.other === 0 && same(endpoints.ready) && endpoints.notReady === 0 ? ips : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

describe('EndpointSlices and Endpoints follow a Deployment (kubectl 1.36)', () => {
  it('lists the ready pods through scale up, scale down and deletion of the Deployment', async () => {
    await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=3', '--port=8080');
    await ok('expose', 'deployment', 'web', '--port=80', '--target-port=8080', '--name=web');
    const three = await settle('web', 3);

    const [slice] = (await sliceView('web')).slices;
    const service = await json('get', 'service', 'web');
    expect(slice.metadata.labels).toMatchObject({
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    });
    expect(slice.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Service', name: 'web', uid: service.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(slice.metadata.annotations['endpoints.kubernetes.io/last-change-trigger-time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(slice.addressType).toBe('IPv4');
    expect(slice.ports).toEqual([{ name: '', port: 8080, protocol: 'TCP' }]);
    expect(slice.endpoints.every((e: any) => e.nodeName && e.targetRef?.kind === 'Pod' && e.conditions.serving && !e.conditions.terminating)).toBe(true);
    const endpoints = (await endpointsView('web')).object;
    expect(endpoints.metadata.labels['endpointslice.kubernetes.io/skip-mirror']).toBe('true');
    expect(endpoints.subsets[0].ports).toEqual([{ port: 8080, protocol: 'TCP' }]);

    const table = await ok('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web');
    expect(table.split('\n')[0]).toMatch(/^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/);
    expect(table).toContain(`${slice.metadata.name}`);
    expect(table).toMatch(/IPv4\s+8080\s+/);
    const described = await ok('describe', 'service', 'web');
    for (const ip of three) expect(described).toContain(`${ip}:8080`);

    await ok('scale', 'deployment', 'web', '--replicas=5');
    await settle('web', 5);
    await ok('scale', 'deployment', 'web', '--replicas=2');
    await settle('web', 2);

    await ok('delete', 'deployment', 'web');
    await waitFor(
      'no pods, no endpoints',
      async () => {
        const pods = await json('get', 'pods', '-l', 'app=web');
        const slices = await sliceView('web');
        const eps = await endpointsView('web');
        return pods.items.length === 0 && slices.ready.length + slices.other === 0 && eps.ready.length + eps.notReady === 0;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    // One empty slice stays for the Service; its Endpoints stay, empty.
    expect((await sliceView('web')).slices).toHaveLength(1);
    expect((await endpointsView('web')).object.subsets ?? []).toEqual([]);

    await ok('delete', 'service', 'web');
    await waitFor(
      'the slices and the Endpoints of the deleted Service gone',
      async () => (await sliceView('web')).slices.length === 0 && (await json('get', 'endpoints')).items.every((e: any) => e.metadata.name !== 'web'),
      CLUSTER_TIMEOUT,
    );
  });

  it('lists a pod that turned ready in its EndpointSlice and Endpoints within a second (p50 and max printed)', async () => {
    const pods = 40;
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(skiff.kubeconfig);
    const readySeen = new Map<string, number>();
    const endpointSeen = new Map<string, number>();
    const addressSeen = new Map<string, number>();
    const watch = new k8s.Watch(kc);
    const podWatch = await watch.watch(
      '/api/v1/namespaces/default/pods',
      { labelSelector: 'app=latency' },
      (_type, pod: k8s.V1Pod) => {
        const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        if (ready && !readySeen.has(pod.metadata!.name!)) readySeen.set(pod.metadata!.name!, performance.now());
      },
      () => undefined,
    );
    const sliceWatch = await watch.watch(
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
      { labelSelector: 'kubernetes.io/service-name=latency' },
      (_type, slice: k8s.V1EndpointSlice) => {
        for (const endpoint of slice.endpoints ?? []) {
          const name = endpoint.targetRef?.name;
          if (name && endpoint.conditions?.ready && !endpointSeen.has(name)) endpointSeen.set(name, performance.now());
        }
      },
      () => undefined,
    );
    const endpointsWatch = await watch.watch(
      '/api/v1/namespaces/default/endpoints',
      { fieldSelector: 'metadata.name=latency' },
      (_type, endpoints: k8s.V1Endpoints) => {
        for (const address of (endpoints.subsets ?? []).flatMap((subset) => subset.addresses ?? [])) {
          const name = address.targetRef?.name;
          if (name && !addressSeen.has(name)) addressSeen.set(name, performance.now());
        }
      },
      () => undefined,
    );
    try {
      await ok('create', 'service', 'clusterip', 'latency', '--tcp=80:8080');
      await ok('create', 'deployment', 'latency', '--image=nginx:1.27', `--replicas=${pods}`, '--port=8080');
      await waitFor('every pod seen ready and listed', () => readySeen.size === pods && endpointSeen.size === pods && addressSeen.size === pods, {
        timeoutMs: 60_000,
      });
    } finally {
      podWatch.abort();
      sliceWatch.abort();
      endpointsWatch.abort();
    }
    for (const [what, seen] of [
      ['EndpointSlice', endpointSeen],
      ['Endpoints', addressSeen],
    ] as const) {
      const latencies = [...readySeen].map(([name, at]) => Math.max(0, seen.get(name)! - at)).sort((a, b) => a - b);
      const p50 = latencies[Math.floor(latencies.length / 2)]!;
      const max = latencies[latencies.length - 1]!;
      console.log(`${what} latency after a pod turns ready, ${pods} pods: p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
      // The brief: within a second of the pod change.
      expect(max).toBeLessThan(1000);
    }
    await ok('delete', 'deployment', 'latency');
    await ok('delete', 'service', 'latency');
  });
});
