import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKubeconfig } from '@skiff/client';
import { RESOURCES, type Pod } from '@skiff/api';
import { startTestCluster, waitFor, type TestCluster } from '@skiff/testing';
import type { NodeMetrics, PodMetrics } from './objects.js';

// A dev-preset cluster (simulated containers) whose kubelet reads usage every 0.3 s, and the metrics API answering
// from it with a resolution of 0.2 s, driven over HTTPS with the admin's credentials as kubectl would.

let cluster: TestCluster;

interface List<T> {
  kind: string;
  apiVersion: string;
  items: T[];
}

/** A request over HTTPS with the admin's credentials, as kubectl sends it. */
function request<T>(method: string, path: string): Promise<{ status: number; body: T }> {
  const { server, caPem, token, certPem, keyPem } = readKubeconfig(cluster.kubeconfig);
  return new Promise((resolve, reject) => {
    const sent = httpsRequest(`${server}${path}`, {
      method,
      ca: caPem,
      cert: certPem,
      key: keyPem,
      headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    sent.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as T }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

const get = <T>(path: string) => request<T>('GET', path);

const cpuMillis = (quantity: string) =>
  quantity.endsWith('n') ? Number(quantity.slice(0, -1)) / 1e6 : quantity.endsWith('m') ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000;

async function createPod(name: string, annotations: Record<string, string>, labels: Record<string, string> = {}, namespace = 'default'): Promise<void> {
  await cluster.client.create<Pod>(
    RESOURCES.pods,
    {
      metadata: { name, annotations, labels },
      spec: {
        containers: [
          { name: 'app', image: 'busybox' },
          { name: 'sidecar', image: 'busybox', resources: { limits: { cpu: '50m' } } },
        ],
      },
    },
    namespace,
  );
}

beforeAll(async () => {
  cluster = await startTestCluster({
    plugins: [
      ['@skiff/kubelet', { housekeepingSeconds: 0.3 }],
      ['@skiff/plugin-metrics-server', { metricResolutionSeconds: 0.2 }],
    ],
  });
  await cluster.client.create(RESOURCES.namespaces, { metadata: { name: 'other' } });
  await createPod('busy', { 'skiff.io/simulate-cpu': '250m', 'skiff.io/simulate-memory': '64Mi' }, { app: 'busy' });
  await createPod('idle', {}, { app: 'idle' });
  await createPod('elsewhere', { 'skiff.io/simulate-cpu': '10m' }, {}, 'other');
  await waitFor('metrics of the three pods', async () => (await get<List<PodMetrics>>('/apis/metrics.k8s.io/v1beta1/pods')).body.items?.length === 3, {
    timeoutMs: 20_000,
    intervalMs: 200,
  });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('metrics.k8s.io/v1beta1', () => {
  it('is listed by discovery with nodes and pods (get, list)', async () => {
    const { body } = await get<{ groups: { name: string; preferredVersion: { groupVersion: string } }[] }>('/apis');
    expect(body.groups.find((group) => group.name === 'metrics.k8s.io')?.preferredVersion.groupVersion).toBe('metrics.k8s.io/v1beta1');
    const resources = await get<{ resources: { name: string; namespaced: boolean; kind: string; verbs: string[] }[] }>('/apis/metrics.k8s.io/v1beta1');
    expect(resources.body.resources).toEqual([
      expect.objectContaining({ name: 'nodes', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] }),
      expect.objectContaining({ name: 'pods', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] }),
    ]);
  });

  it('PodMetrics: each container at its simulated rate, its CPU limit holding it', async () => {
    const { status, body } = await get<PodMetrics>('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      kind: 'PodMetrics',
      apiVersion: 'metrics.k8s.io/v1beta1',
      metadata: { name: 'busy', namespace: 'default', labels: { app: 'busy' } },
    });
    expect(body.window).toMatch(/^\d+(\.\d+)?m?s$/);
    expect(Date.parse(body.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    const [app, sidecar] = body.containers;
    expect(app!.name).toBe('app');
    expect(cpuMillis(app!.usage.cpu)).toBeCloseTo(250, 0);
    expect(app!.usage.memory).toBe('64Mi');
    expect(cpuMillis(sidecar!.usage.cpu)).toBeCloseTo(50, 0);
  });

  it('lists by namespace, across namespaces, by label and by metadata.name', async () => {
    const names = async (path: string) =>
      (await get<List<PodMetrics>>(path)).body.items.map((item) => `${item.metadata.namespace}/${item.metadata.name}`).sort();
    expect(await names('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods')).toEqual(['default/busy', 'default/idle']);
    expect(await names('/apis/metrics.k8s.io/v1beta1/pods')).toEqual(['default/busy', 'default/idle', 'other/elsewhere']);
    expect(await names('/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Didle')).toEqual(['default/idle']);
    expect(await names('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?fieldSelector=metadata.name%3Dbusy')).toEqual(['default/busy']);
    const list = await get<List<PodMetrics>>('/apis/metrics.k8s.io/v1beta1/namespaces/other/pods');
    expect(list.body).toMatchObject({ kind: 'PodMetricsList', apiVersion: 'metrics.k8s.io/v1beta1' });
  });

  it('NodeMetrics: the node is its base plus its pods', async () => {
    const list = await get<List<NodeMetrics>>('/apis/metrics.k8s.io/v1beta1/nodes');
    expect(list.body.kind).toBe('NodeMetricsList');
    expect(list.body.items.map((item) => item.metadata.name)).toEqual(['node-1']);
    const node = await get<NodeMetrics>('/apis/metrics.k8s.io/v1beta1/nodes/node-1');
    // 100m of its own, 250m + 50m, 1m + 50m (the idle pod's sidecar defaults to 1m), 10m + 10m.
    expect(cpuMillis(node.body.usage.cpu)).toBeCloseTo(100 + 300 + 2 + 20, -1);
    expect(node.body.metadata.labels).toMatchObject({ 'kubernetes.io/hostname': 'node-1' });
  });

  it('answers NotFound for objects without metrics, BadRequest for other field selectors, MethodNotAllowed for writes', async () => {
    const missing = await get<{ kind: string; reason: string; message: string }>('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope');
    expect(missing).toMatchObject({ status: 404, body: { kind: 'Status', reason: 'NotFound', message: 'podmetrics.metrics.k8s.io "nope" not found' } });
    expect((await get('/apis/metrics.k8s.io/v1beta1/nodes/node-9')).status).toBe(404);
    const selector = await get<{ message: string }>('/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dnode-1');
    expect(selector).toMatchObject({ status: 400, body: { message: 'field label not supported: spec.nodeName' } });
    const write = await request('DELETE', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy');
    expect(write.status).toBe(405);
  });

  it('leaves a pod out once it is gone', async () => {
    await cluster.client.delete(RESOURCES.pods, 'idle', 'default', { gracePeriodSeconds: 0 });
    await waitFor(
      'idle to leave the list',
      async () => !(await get<List<PodMetrics>>('/apis/metrics.k8s.io/v1beta1/pods')).body.items.some((item) => item.metadata.name === 'idle'),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
  });
});
