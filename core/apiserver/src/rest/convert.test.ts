import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

// autoscaling/v1 HorizontalPodAutoscalers are the stored autoscaling/v2 ones, converted on the way in and out.
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';

describe('a version served from another version’s storage', () => {
  it('creates through v1 (as kubectl autoscale did), and reads, lists, patches and watches in either version', async () => {
    const created = await server.request('POST', V1, {
      body: {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web' },
        spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
      },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { maxReplicas: 5, minReplicas: 1, targetCPUUtilizationPercentage: 50 } });

    const v2 = (await server.request('GET', `${V2}/web`)).json;
    expect(v2.apiVersion).toBe('autoscaling/v2');
    expect(v2.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);

    const patched = await server.request('PATCH', `${V1}/web`, {
      body: JSON.stringify({ spec: { targetCPUUtilizationPercentage: 70 } }),
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(200);
    expect(patched.json.spec.targetCPUUtilizationPercentage).toBe(70);
    expect((await server.request('GET', `${V2}/web`)).json.spec.metrics[0].resource.target.averageUtilization).toBe(70);

    const list = (await server.request('GET', V1, { headers: { accept: 'application/json' } })).json;
    expect(list).toMatchObject({ kind: 'HorizontalPodAutoscalerList', apiVersion: 'autoscaling/v1' });
    expect(list.items[0]).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { targetCPUUtilizationPercentage: 70 } });
  });

  it('keeps what v1 cannot say across a v1 round trip (other metrics, behavior) in annotations', async () => {
    const memory = { type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 60 } } };
    const current = (await server.request('GET', `${V2}/web`)).json;
    current.spec.metrics.push(memory);
    expect((await server.request('PUT', `${V2}/web`, { body: current })).status).toBe(200);
    const v1 = (await server.request('GET', `${V1}/web`)).json;
    expect(JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics'])).toEqual([memory]);
    v1.spec.maxReplicas = 8;
    const updated = await server.request('PUT', `${V1}/web`, { body: v1 });
    expect(updated.status).toBe(200);
    const v2 = (await server.request('GET', `${V2}/web`)).json;
    expect(v2.spec.maxReplicas).toBe(8);
    expect(v2.spec.metrics).toEqual([expect.objectContaining({ resource: expect.objectContaining({ name: 'cpu' }) }), memory]);
    expect(v2.metadata.annotations?.['autoscaling.alpha.kubernetes.io/metrics']).toBeUndefined();
  });

  it('is listed in discovery beside the preferred version', async () => {
    const group = (await server.request('GET', '/apis/autoscaling')).json;
    expect(group.versions.map((v: { version: string }) => v.version)).toEqual(['v2', 'v1']);
    expect(group.preferredVersion.version).toBe('v2');
    const resources = (await server.request('GET', '/apis/autoscaling/v1')).json;
    expect(resources.resources.map((r: { name: string }) => r.name)).toContain('horizontalpodautoscalers');
  });
});
