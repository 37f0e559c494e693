import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const MERGE = 'application/merge-patch+json';
const template = { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } };

async function create(path: string, body: unknown): Promise<any> {
  const response = await server.request('POST', path, { body });
  expect(response.status, JSON.stringify(response.json)).toBe(201);
  return response.json;
}

describe('status subresource writes', () => {
  it('keep the metadata of a namespaces/status patch and of a namespace finalize, as upstream’s e2e tests patch them', async () => {
    await create('/api/v1/namespaces', { metadata: { name: 'status-ns' } });
    const condition = { type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Set from an e2e test' };
    const patched = await server.request('PATCH', '/api/v1/namespaces/status-ns/status', {
      body: { metadata: { annotations: { 'e2e-patched-ns-status': 'status-ns' } }, status: { conditions: [condition] } },
      contentType: MERGE,
    });
    expect(patched.status).toBe(200);
    expect(patched.json.metadata.annotations).toEqual({ 'e2e-patched-ns-status': 'status-ns' });
    expect(patched.json.status).toEqual({ phase: 'Active', conditions: [condition] });

    const current = patched.json;
    const finalized = await server.request('PUT', '/api/v1/namespaces/status-ns/finalize', {
      body: { ...current, metadata: { ...current.metadata, labels: { finalized: 'yes' } }, spec: { finalizers: ['kubernetes', 'e2e.example.com/fake'] } },
    });
    expect(finalized.status).toBe(200);
    expect(finalized.json.metadata.labels).toEqual({ finalized: 'yes', 'kubernetes.io/metadata.name': 'status-ns' });
    expect(finalized.json.spec.finalizers).toEqual(['kubernetes', 'e2e.example.com/fake']);
  });

  it('keep labels and annotations of jobs/status and cronjobs/status writes and leave the spec alone', async () => {
    const job = await create('/apis/batch/v1/namespaces/default/jobs', { metadata: { name: 'status-job' }, spec: { template } });
    const updated = await server.request('PUT', '/apis/batch/v1/namespaces/default/jobs/status-job/status', {
      body: {
        ...job,
        metadata: { ...job.metadata, labels: { ...job.metadata.labels, updated: 'true' }, annotations: { note: 'status' } },
        spec: { ...job.spec, parallelism: 7 },
        status: { ...job.status, active: 1 },
      },
    });
    expect(updated.status, JSON.stringify(updated.json)).toBe(200);
    expect(updated.json.metadata.labels.updated).toBe('true');
    expect(updated.json.metadata.annotations).toEqual({ note: 'status' });
    expect(updated.json.spec.parallelism).toBe(job.spec.parallelism);
    expect(updated.json.status.active).toBe(1);
    expect(updated.json.metadata.generation).toBe(job.metadata.generation);
    // Upstream's e2e test moves status.startTime by a patch, then by an update.
    const started = await server.request('PATCH', '/apis/batch/v1/namespaces/default/jobs/status-job/status', {
      body: { metadata: { annotations: { patchedstatus: 'true' } }, status: { startTime: '2024-01-01T00:00:00Z' } },
      contentType: MERGE,
    });
    expect(started.status, started.text).toBe(200);
    expect(started.json.status.startTime).toBe('2024-01-01T00:00:00Z');
    expect(started.json.metadata.annotations).toEqual({ note: 'status', patchedstatus: 'true' });
    const restarted = await server.request('PUT', '/apis/batch/v1/namespaces/default/jobs/status-job/status', {
      body: { ...started.json, status: { ...started.json.status, startTime: '2024-01-02T00:00:00Z' } },
    });
    expect(restarted.status, restarted.text).toBe(200);
    expect(restarted.json.status.startTime).toBe('2024-01-02T00:00:00Z');

    await create('/apis/batch/v1/namespaces/default/cronjobs', {
      metadata: { name: 'status-cron' },
      spec: { schedule: '*/1 * * * *', jobTemplate: { spec: { template } } },
    });
    const patched = await server.request('PATCH', '/apis/batch/v1/namespaces/default/cronjobs/status-cron/status', {
      body: { metadata: { annotations: { patchedstatus: 'true' } }, status: { lastScheduleTime: '2024-01-01T00:00:00Z' } },
      contentType: MERGE,
    });
    expect(patched.status).toBe(200);
    expect(patched.json.metadata.annotations).toEqual({ patchedstatus: 'true' });
    expect(patched.json.status.lastScheduleTime).toBe('2024-01-01T00:00:00Z');
  });

  it('keep a ClusterIP Service’s load balancer status and the patch’s annotations', async () => {
    await create('/api/v1/namespaces/default/services', { metadata: { name: 'status-svc' }, spec: { ports: [{ port: 80 }] } });
    const loadBalancer = { ingress: [{ ip: '203.0.113.1' }] };
    const patched = await server.request('PATCH', '/api/v1/namespaces/default/services/status-svc/status', {
      body: { metadata: { annotations: { patchedstatus: 'true' } }, status: { loadBalancer } },
      contentType: MERGE,
    });
    expect(patched.status).toBe(200);
    expect(patched.json.metadata.annotations).toEqual({ patchedstatus: 'true' });
    expect(patched.json.spec.type).toBe('ClusterIP');
    const stored = (await server.request('GET', '/api/v1/namespaces/default/services/status-svc')).json;
    expect(stored.status.loadBalancer).toEqual(loadBalancer);
    expect(stored.metadata.annotations).toEqual({ patchedstatus: 'true' });
  });

  it('keep the fields a kind’s status strategy protects: a Deployment’s labels, a Pod’s owners, all of a FlowSchema’s metadata', async () => {
    const pod = await create('/api/v1/namespaces/default/pods', { metadata: { name: 'status-pod' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const owner = { apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'u' };
    const podStatus = await server.request('PUT', '/api/v1/namespaces/default/pods/status-pod/status', {
      body: { ...pod, metadata: { ...pod.metadata, labels: { relabelled: 'yes' }, ownerReferences: [owner] }, status: { ...pod.status, message: 'm' } },
    });
    expect(podStatus.status).toBe(200);
    expect(podStatus.json.metadata.labels).toEqual({ relabelled: 'yes' });
    expect(podStatus.json.metadata.ownerReferences).toBeUndefined();

    const deployment = await create('/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'status-deploy', labels: { app: 'd' } },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    const patched = await server.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/status-deploy/status', {
      body: { metadata: { labels: { app: 'other' }, annotations: { seen: 'yes' } }, status: { replicas: 1 } },
      contentType: MERGE,
    });
    expect(patched.json.metadata.labels).toEqual(deployment.metadata.labels);
    expect(patched.json.metadata.annotations).toMatchObject({ seen: 'yes' });

    const flowSchema = await create('/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', {
      metadata: { name: 'status-fs', labels: { kept: 'yes' } },
      spec: { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: 5000 },
    });
    const status = await server.request('PATCH', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/status-fs/status', {
      body: { metadata: { labels: { kept: 'no' }, annotations: { added: 'yes' } }, status: { conditions: [{ type: 'Dangling', status: 'False' }] } },
      contentType: MERGE,
    });
    expect(status.status).toBe(200);
    expect(status.json.metadata.labels).toEqual(flowSchema.metadata.labels);
    expect(status.json.metadata.annotations).toEqual(flowSchema.metadata.annotations);
    expect(status.json.status.conditions).toEqual([{ type: 'Dangling', status: 'False' }]);
  });
});
