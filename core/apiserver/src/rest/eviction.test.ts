import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';

// The eviction subresource against PodDisruptionBudgets whose status the test writes, as the disruption
// controller would (no controller runs here).

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const PODS = '/api/v1/namespaces/default/pods';
const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';

async function runningPod(name: string, app: string, ready = true) {
  const created = (await server.request('POST', PODS, { body: pod(name, { metadata: { labels: { app } }, spec: { nodeName: 'node-1' } }) })).json;
  const status = { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
  return (await server.request('PUT', `${PODS}/${name}/status`, { body: { ...created, status } })).json;
}

/** A budget over `app` whose status says what the test wants, observed at its current generation. */
async function budget(name: string, app: string, status: Record<string, unknown>, spec: Record<string, unknown> = { minAvailable: 1 }) {
  const created = (await server.request('POST', PDBS, { body: { metadata: { name }, spec: { selector: { matchLabels: { app } }, ...spec } } })).json;
  const full = { currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, disruptionsAllowed: 0, observedGeneration: created.metadata.generation, ...status };
  const response = await server.request('PUT', `${PDBS}/${name}/status`, { body: { ...created, status: full } });
  expect(response.status).toBe(200);
  return response.json;
}

const evict = (name: string, deleteOptions: Record<string, unknown> = {}, query = '') =>
  server.request('POST', `${PODS}/${name}/eviction${query}`, {
    body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' }, deleteOptions },
  });

describe('eviction and disruption budgets', () => {
  it('refuses with 429 and a DisruptionBudget cause while the budget allows nothing', async () => {
    await runningPod('deny-1', 'deny');
    await budget('deny', 'deny', { currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 });
    const response = await evict('deny-1');
    expect(response.status).toBe(429);
    expect(response.json).toMatchObject({
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget deny needs 1 healthy pods and has 1 currently' }] },
    });
    expect((await server.request('GET', `${PODS}/deny-1`)).json.metadata.deletionTimestamp).toBeUndefined();
  });

  it('takes one disruption, records the pod and marks it before deleting it', async () => {
    await runningPod('allow-1', 'allow');
    await runningPod('allow-2', 'allow');
    await budget('allow', 'allow', { currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, disruptionsAllowed: 1 });
    const response = await evict('allow-1');
    expect(response.status).toBe(201);
    const pdb = (await server.request('GET', `${PDBS}/allow`)).json;
    expect(pdb.status.disruptionsAllowed).toBe(0);
    expect(Object.keys(pdb.status.disruptedPods)).toEqual(['allow-1']);
    expect(pdb.status.conditions).toEqual([expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' })]);
    // Bound to a node, the pod is deleted gracefully: it stays, terminating, with the condition.
    const evicted = (await server.request('GET', `${PODS}/allow-1`)).json;
    expect(evicted.metadata.deletionTimestamp).toBeDefined();
    expect(evicted.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' }),
    );
    // The next one is refused: the budget is used up.
    expect((await evict('allow-2')).status).toBe(429);
  });

  it('refuses while the controller has not observed the budget’s generation', async () => {
    await runningPod('stale-1', 'stale');
    await budget('stale', 'stale', { currentHealthy: 1, expectedPods: 1, disruptionsAllowed: 1, observedGeneration: 0 });
    const response = await evict('stale-1');
    expect(response.status).toBe(429);
    expect(response.json.details.causes).toEqual([
      { reason: 'DisruptionBudget', message: 'The disruption budget stale is still being processed by the server.' },
    ]);
  });

  it('lets pending pods, unhealthy pods of a healthy budget and AlwaysAllow budgets through without taking a disruption', async () => {
    await server.request('POST', PODS, { body: pod('pending-1', { metadata: { labels: { app: 'lax' } } }) });
    await runningPod('sick-1', 'lax', false);
    await runningPod('well-1', 'lax');
    await budget('lax', 'lax', { currentHealthy: 1, desiredHealthy: 1, expectedPods: 2 });
    expect((await evict('pending-1')).status).toBe(201);
    expect((await evict('sick-1')).status).toBe(201);
    expect((await evict('well-1')).status).toBe(429);

    await runningPod('always-1', 'always', false);
    await budget('always', 'always', { expectedPods: 1, desiredHealthy: 1 }, { minAvailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    expect((await evict('always-1')).status).toBe(201);
    expect((await server.request('GET', `${PDBS}/always`)).json.status.disruptedPods).toBeUndefined();
  });

  it('answers 500 for a pod two budgets cover, and writes nothing on a dry run', async () => {
    await runningPod('twice-1', 'twice');
    await budget('twice-a', 'twice', { disruptionsAllowed: 1, expectedPods: 1, currentHealthy: 1 });
    await budget('twice-b', 'twice', { disruptionsAllowed: 1, expectedPods: 1, currentHealthy: 1 });
    const response = await evict('twice-1');
    expect(response.status).toBe(500);
    expect(response.json.message).toBe('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');

    await runningPod('dry-1', 'dry');
    await budget('dry', 'dry', { disruptionsAllowed: 1, expectedPods: 1, currentHealthy: 1 });
    expect((await evict('dry-1', {}, '?dryRun=All')).status).toBe(201);
    expect((await server.request('GET', `${PDBS}/dry`)).json.status.disruptionsAllowed).toBe(1);
    expect((await server.request('GET', `${PODS}/dry-1`)).json.metadata.deletionTimestamp).toBeUndefined();
    // kubectl drain --dry-run=server says so in the delete options.
    expect((await evict('dry-1', { dryRun: ['All'] })).status).toBe(201);
    expect((await server.request('GET', `${PDBS}/dry`)).json.status.disruptionsAllowed).toBe(1);
    expect((await server.request('GET', `${PODS}/dry-1`)).json.metadata.deletionTimestamp).toBeUndefined();
  });
});
