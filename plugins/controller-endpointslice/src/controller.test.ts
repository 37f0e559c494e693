import { RESOURCES, type EndpointSlice, type Event, type Node, type Pod, type Service, type ServicePort } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import endpointSliceController from './index.js';

let plane: ControlPlane;
beforeAll(async () => {
  plane = await startControlPlane([endpointSliceController]);
  for (const name of ['node-1', 'node-2']) {
    const labels: Record<string, string> = name === 'node-1' ? { 'topology.kubernetes.io/zone': 'zone-a' } : {};
    await plane.client.create<Node>(RESOURCES.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
  }
});
afterAll(async () => {
  await plane?.stop();
});

const ns = 'default';

async function createService(
  name: string,
  ports: ServicePort[] = [{ name: 'http', port: 80, targetPort: 8080 }],
  selector: Record<string, string> | null = { app: name },
) {
  return plane.client.create<Service>(
    RESOURCES.services,
    { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ...(selector ? { selector } : {}), ports } },
    ns,
  );
}

let nextIP = 1;
/** A pod bound to a node, as the scheduler would leave it; `ready` gives it an IP and a Ready condition as a kubelet would. */
async function createPod(name: string, app: string, options: { node?: string; ports?: { name: string; containerPort: number }[] } = {}): Promise<Pod> {
  return plane.client.create<Pod>(
    RESOURCES.pods,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app } },
      spec: { nodeName: options.node ?? 'node-1', containers: [{ name: 'c', image: 'nginx', ports: options.ports ?? [{ name: 'web', containerPort: 8080 }] }] },
    },
    ns,
  );
}

async function setReady(name: string, ready: boolean, ip?: string, since = new Date()): Promise<Pod> {
  const pod = await plane.client.get<Pod>(RESOURCES.pods, name, ns);
  const podIP = ip ?? pod.status?.podIP ?? `10.244.${Math.floor(nextIP / 250)}.${(nextIP++ % 250) + 1}`;
  return plane.client.updateStatus<Pod>(RESOURCES.pods, {
    ...pod,
    status: {
      phase: 'Running',
      podIP,
      podIPs: [{ ip: podIP }],
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: since.toISOString().replace(/\.\d+Z$/, 'Z') }],
    },
  });
}

async function slicesOf(service: string): Promise<EndpointSlice[]> {
  return (await plane.client.list<EndpointSlice>(RESOURCES.endpointslices, ns, { labelSelector: `kubernetes.io/service-name=${service}` })).items;
}

/** The endpoints of a Service's slices, by pod name: `ready/serving/terminating` as r/s/t letters. */
async function endpointsOf(service: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const slice of await slicesOf(service)) {
    for (const endpoint of slice.endpoints ?? []) {
      const c = endpoint.conditions ?? {};
      result[endpoint.targetRef!.name!] = `${c.ready ? 'r' : '-'}${c.serving ? 's' : '-'}${c.terminating ? 't' : '-'}`;
    }
  }
  return result;
}

const sameAs = (expected: Record<string, string>) => async (service: string) => {
  const actual = await endpointsOf(service);
  return JSON.stringify(Object.entries(actual).sort()) === JSON.stringify(Object.entries(expected).sort()) ? actual : undefined;
};

describe('EndpointSlice controller against a real API server', () => {
  it('gives a new Service one empty slice, owned by it, then fills it as pods turn ready', async () => {
    const service = await createService('web');
    const [placeholder] = await waitFor('a placeholder slice', async () => ((await slicesOf('web')).length === 1 ? slicesOf('web') : undefined));
    expect(placeholder!.metadata).toMatchObject({
      generateName: 'web-',
      labels: {
        'kubernetes.io/service-name': 'web',
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        'service.kubernetes.io/headless': '',
      },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: service.metadata.uid, controller: true, blockOwnerDeletion: true }],
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': service.metadata.creationTimestamp },
    });
    expect(placeholder!.metadata.name).toMatch(/^web-/);
    expect(placeholder).toMatchObject({ addressType: 'IPv4', endpoints: [], ports: [] });

    await createPod('web-1', 'web');
    await createPod('web-2', 'web', { node: 'node-2' });
    const pod1 = await setReady('web-1', true, '10.244.1.10');
    await setReady('web-2', false, '10.244.2.10', new Date(Date.now() - 60_000));
    await waitFor('web-1 ready, web-2 not', () => sameAs({ 'web-1': 'rs-', 'web-2': '---' })('web'));
    const [slice] = await slicesOf('web');
    // The placeholder became the slice: same name, no second slice.
    expect(slice!.metadata.name).toBe(placeholder!.metadata.name);
    expect(slice!.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(slice!.endpoints!.find((e) => e.targetRef?.name === 'web-1')).toEqual({
      addresses: ['10.244.1.10'],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: pod1.metadata.uid },
      nodeName: 'node-1',
      zone: 'zone-a',
    });

    await setReady('web-2', true);
    await waitFor('both ready', () => sameAs({ 'web-1': 'rs-', 'web-2': 'rs-' })('web'));
    const readyAt = (await plane.client.get<Pod>(RESOURCES.pods, 'web-2', ns)).status!.conditions![0]!.lastTransitionTime;
    expect((await slicesOf('web'))[0]!.metadata.annotations).toEqual({ 'endpoints.kubernetes.io/last-change-trigger-time': readyAt });
  });

  it('keeps a terminating pod as not ready but serving, and drops it once it is gone', async () => {
    await createService('drain');
    await createPod('drain-1', 'drain');
    await createPod('drain-2', 'drain');
    await setReady('drain-1', true);
    await setReady('drain-2', true);
    await waitFor('two ready', () => sameAs({ 'drain-1': 'rs-', 'drain-2': 'rs-' })('drain'));
    // Bound pods wait for their kubelet to finish a graceful deletion; there is none here, so it stays terminating.
    await plane.client.delete(RESOURCES.pods, 'drain-1', ns);
    await waitFor('drain-1 terminating', () => sameAs({ 'drain-1': '-st', 'drain-2': 'rs-' })('drain'));
    await plane.client.delete(RESOURCES.pods, 'drain-1', ns, { gracePeriodSeconds: 0 });
    await waitFor('drain-1 gone', () => sameAs({ 'drain-2': 'rs-' })('drain'));
  });

  it('puts pods whose named port resolves to different numbers into different slices', async () => {
    await createService('named', [{ name: 'http', port: 80, targetPort: 'web', appProtocol: 'http' }]);
    await createPod('named-1', 'named', { ports: [{ name: 'web', containerPort: 8080 }] });
    await createPod('named-2', 'named', { ports: [{ name: 'web', containerPort: 9090 }] });
    await setReady('named-1', true);
    await setReady('named-2', true);
    const slices = await waitFor('two slices with one endpoint each', async () => {
      const list = await slicesOf('named');
      return list.length === 2 && list.every((slice) => slice.endpoints?.length === 1) ? list : undefined;
    });
    const ports = Object.fromEntries(slices.map((slice) => [slice.endpoints![0]!.targetRef!.name, slice.ports]));
    expect(ports).toEqual({
      'named-1': [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
      'named-2': [{ name: 'http', port: 9090, protocol: 'TCP', appProtocol: 'http' }],
    });
  });

  it('spreads 130 pods over slices of at most 100 endpoints', async () => {
    await createService('many');
    const names = Array.from({ length: 130 }, (_, i) => `many-${i}`);
    for (const name of names) await createPod(name, 'many');
    for (const name of names) await setReady(name, true);
    const slices = await waitFor('130 endpoints', async () => {
      const list = await slicesOf('many');
      return list.reduce((sum, slice) => sum + (slice.endpoints?.length ?? 0), 0) === 130 ? list : undefined;
    });
    expect(slices.map((slice) => slice.endpoints!.length).sort((a, b) => b - a)).toEqual([100, 30]);
  });

  it('leaves Services without a selector alone, and removes the slices of a deleted Service', async () => {
    await createService('manual', [{ port: 80 }], null);
    await createService('gone');
    await waitFor('a slice for gone', async () => (await slicesOf('gone')).length === 1);
    await plane.client.delete(RESOURCES.services, 'gone', ns);
    await waitFor('the slice of gone deleted', async () => (await slicesOf('gone')).length === 0);
    // Both Services were handled in the same passes; the selector-less one got nothing.
    expect(await slicesOf('manual')).toEqual([]);
  });

  it('follows a pod that leaves the Service when relabelled, and records nothing as failing', async () => {
    await createService('moving');
    await createPod('moving-1', 'moving');
    await setReady('moving-1', true);
    await waitFor('moving-1 listed', () => sameAs({ 'moving-1': 'rs-' })('moving'));
    await plane.client.patch(RESOURCES.pods, 'moving-1', { metadata: { labels: { app: 'elsewhere' } } }, { namespace: ns, patchType: 'merge' });
    await waitFor('moving-1 dropped', () => sameAs({})('moving'));
    const events = await plane.client.list<Event>(RESOURCES.events, ns);
    expect(events.items.filter((event) => event.reason === 'FailedToUpdateEndpointSlices')).toEqual([]);
  });
});
