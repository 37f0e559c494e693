import {
  isApiError,
  RESOURCES,
  type Deployment,
  type Event,
  type OwnerReference,
  type Pod,
  type PodDisruptionBudget,
  type ReplicaSet,
  type StatefulSet,
} from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import disruptionController from './index.js';

// No kubelet runs here: the test binds pods to `node-x` and reports their readiness itself. Workload
// objects are created for their scale only; no workload controller runs to make pods for them.

let plane: ControlPlane;
beforeAll(async () => {
  plane = await startControlPlane([disruptionController], { config: { logLevel: 'warn' } });
});
afterAll(async () => {
  await plane?.stop();
});

const ns = 'default';
const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'pause' }] } });

async function createPod(name: string, app: string, options: { ready?: boolean; owner?: OwnerReference } = {}): Promise<Pod> {
  const pod = await plane.client.create<Pod>(
    RESOURCES.pods,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app }, ...(options.owner ? { ownerReferences: [options.owner] } : {}) },
      spec: { nodeName: 'node-x', containers: [{ name: 'c', image: 'pause' }] },
    },
    ns,
  );
  return setReady(pod, options.ready ?? true);
}

async function setReady(pod: Pod, ready: boolean): Promise<Pod> {
  const fresh = await plane.client.get<Pod>(RESOURCES.pods, pod.metadata.name!, ns);
  const conditions = (fresh.status?.conditions ?? []).filter((c) => c.type !== 'Ready');
  return plane.client.updateStatus<Pod>(RESOURCES.pods, {
    ...fresh,
    status: { ...fresh.status, phase: 'Running', conditions: [...conditions, { type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
}

async function createBudget(
  name: string,
  app: string,
  bound: { minAvailable?: number | string; maxUnavailable?: number | string },
): Promise<PodDisruptionBudget> {
  return plane.client.create<PodDisruptionBudget>(
    RESOURCES.poddisruptionbudgets,
    { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector: { matchLabels: { app } }, ...bound } },
    ns,
  );
}

const getBudget = (name: string) => plane.client.get<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets, name, ns);

/** Waits until the budget's status shows `expected` (a subset of its fields). */
function statusIs(name: string, expected: Partial<NonNullable<PodDisruptionBudget['status']>>) {
  return waitFor(`${name} status ${JSON.stringify(expected)}`, async () => {
    const pdb = await getBudget(name);
    const status = pdb.status ?? {};
    const matches = Object.entries(expected).every(([key, value]) => JSON.stringify(status[key as keyof typeof status]) === JSON.stringify(value));
    return matches && pdb;
  });
}

const ownerRef = (kind: string, apiVersion: string, object: { metadata: { name?: string; uid?: string } }): OwnerReference => ({
  apiVersion,
  kind,
  name: object.metadata.name!,
  uid: object.metadata.uid!,
  controller: true,
});

describe('disruption controller against a real API server', () => {
  it('counts healthy pods against minAvailable and follows readiness', async () => {
    const created = await createBudget('count', 'count', { minAvailable: 2 });
    expect(created.metadata.generation).toBe(1);
    for (const name of ['count-1', 'count-2', 'count-3']) await createPod(name, 'count');
    const pdb = await statusIs('count', { currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1, observedGeneration: 1 });
    expect(pdb.status!.conditions).toEqual([
      {
        type: 'DisruptionAllowed',
        status: 'True',
        reason: 'SufficientPods',
        message: 'enough healthy pods to allow a disruption',
        observedGeneration: 1,
        lastTransitionTime: expect.any(String),
      },
    ]);

    await setReady(await plane.client.get<Pod>(RESOURCES.pods, 'count-1', ns), false);
    const short = await statusIs('count', { currentHealthy: 2, disruptionsAllowed: 0 });
    expect(short.status!.conditions).toEqual([expect.objectContaining({ status: 'False', reason: 'InsufficientPods' })]);

    // A spec change is observed under its new generation.
    await plane.client.patch<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets, 'count', { spec: { minAvailable: 1 } }, { namespace: ns });
    await statusIs('count', { observedGeneration: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
  });

  it('resolves percentages against the scale of the pods’ ReplicaSet, Deployment and StatefulSet', async () => {
    const rs = await plane.client.create<ReplicaSet>(
      RESOURCES.replicasets,
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'pct-rs' },
        spec: { replicas: 4, selector: { matchLabels: { app: 'pct' } }, template: template('pct') },
      },
      ns,
    );
    const set = await plane.client.create<StatefulSet>(
      RESOURCES.statefulsets,
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'pct-ss' },
        spec: { replicas: 6, serviceName: 'pct', selector: { matchLabels: { app: 'pct' } }, template: template('pct') },
      },
      ns,
    );
    await createPod('pct-rs-1', 'pct', { owner: ownerRef('ReplicaSet', 'apps/v1', rs) });
    await createPod('pct-rs-2', 'pct', { owner: ownerRef('ReplicaSet', 'apps/v1', rs) });
    await createPod('pct-ss-0', 'pct', { owner: ownerRef('StatefulSet', 'apps/v1', set) });
    // 4 + 6 expected; 50% of 10 must stay; 3 are healthy.
    await createBudget('pct', 'pct', { minAvailable: '50%' });
    await statusIs('pct', { expectedPods: 10, desiredHealthy: 5, currentHealthy: 3, disruptionsAllowed: 0 });
    // 30% of 10 may be unavailable (rounded up: 3), so 7 must stay.
    await createBudget('pct-max', 'pct', { maxUnavailable: '30%' });
    await statusIs('pct-max', { expectedPods: 10, desiredHealthy: 7, currentHealthy: 3, disruptionsAllowed: 0 });

    const deployment = await plane.client.create<Deployment>(
      RESOURCES.deployments,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'dep' },
        spec: { replicas: 3, selector: { matchLabels: { app: 'dep' } }, template: template('dep') },
      },
      ns,
    );
    const owned = await plane.client.create<ReplicaSet>(
      RESOURCES.replicasets,
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'dep-abc', ownerReferences: [ownerRef('Deployment', 'apps/v1', deployment)] },
        spec: { replicas: 1, selector: { matchLabels: { app: 'dep' } }, template: template('dep') },
      },
      ns,
    );
    for (const name of ['dep-1', 'dep-2', 'dep-3']) await createPod(name, 'dep', { owner: ownerRef('ReplicaSet', 'apps/v1', owned) });
    // The Deployment's 3 replicas count, not its ReplicaSet's 1.
    await createBudget('dep', 'dep', { maxUnavailable: 1 });
    await statusIs('dep', { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
  });

  it('reads the scale subresource of a ReplicaSet whose Deployment is gone', async () => {
    const orphan = await plane.client.create<ReplicaSet>(
      RESOURCES.replicasets,
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        // Its Deployment was never there: neither the cache lookups nor the Deployment path find a scale.
        metadata: { name: 'lost-abc', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'lost', uid: 'no-such-uid', controller: true }] },
        spec: { replicas: 5, selector: { matchLabels: { app: 'lost' } }, template: template('lost') },
      },
      ns,
    );
    await createPod('lost-1', 'lost', { owner: ownerRef('ReplicaSet', 'apps/v1', orphan) });
    await createBudget('lost', 'lost', { minAvailable: '20%' });
    await statusIs('lost', { expectedPods: 5, desiredHealthy: 1, currentHealthy: 1, disruptionsAllowed: 0 });
  });

  it('does not fail over pods without a controller, and fails safe when a controller cannot be found', async () => {
    for (const name of ['free-1', 'free-2', 'free-3']) await createPod(name, 'free');
    await createBudget('free', 'free', { minAvailable: 1 });
    await statusIs('free', { expectedPods: 3, currentHealthy: 3, disruptionsAllowed: 2 });
    // A percentage counts only controllers: none here, so nothing is expected and nothing allowed, without an error.
    await createBudget('free-pct', 'free', { minAvailable: '10%' });
    const pct = await statusIs('free-pct', { expectedPods: 0, currentHealthy: 3, disruptionsAllowed: 0 });
    expect(pct.status!.conditions).toEqual([expect.objectContaining({ reason: 'InsufficientPods' })]);
    const events = await waitFor('UnmanagedPods event', async () => {
      const list = await plane.client.list<Event>(RESOURCES.events, ns, { fieldSelector: 'involvedObject.name=free-pct' });
      return list.items.some((e) => e.reason === 'UnmanagedPods') && list.items;
    });
    expect(events.find((e) => e.reason === 'UnmanagedPods')!.type).toBe('Warning');

    await createPod('ghost-1', 'ghost', { owner: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'ghost', uid: 'no-such-uid', controller: true } });
    await createBudget('ghost', 'ghost', { maxUnavailable: 1 });
    const ghost = await waitFor('SyncFailed', async () => {
      const pdb = await getBudget('ghost');
      return pdb.status?.conditions?.some((c) => c.reason === 'SyncFailed') && pdb;
    });
    expect(ghost.status!.disruptionsAllowed).toBe(0);
    expect(ghost.status!.conditions).toEqual([
      expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: 'found no controllers for pod "ghost-1"' }),
    ]);
  });

  it('keeps recent disruptedPods entries out of the healthy count and drops stale or orphaned ones', async () => {
    for (const name of ['dis-1', 'dis-2', 'dis-3']) await createPod(name, 'dis');
    await createBudget('dis', 'dis', { minAvailable: 1 });
    const pdb = await statusIs('dis', { currentHealthy: 3, disruptionsAllowed: 2 });
    const recent = new Date(Date.now() - 5000).toISOString().replace(/\.\d+Z$/, 'Z');
    const stale = new Date(Date.now() - 3 * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await plane.client.updateStatus<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets, {
      ...pdb,
      status: { ...pdb.status, disruptedPods: { 'dis-1': recent, 'dis-2': stale, 'dis-gone': recent } },
    });
    await statusIs('dis', { currentHealthy: 2, disruptionsAllowed: 1, disruptedPods: { 'dis-1': recent } });
  });

  it('sets a stale DisruptionTarget condition to False, but leaves the kubelet’s', async () => {
    const long = new Date(Date.now() - 3 * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    for (const [name, reason] of [
      ['target-api', 'EvictionByEvictionAPI'],
      ['target-kubelet', 'TerminationByKubelet'],
    ] as const) {
      const pod = await createPod(name, 'target');
      await plane.client.updateStatus<Pod>(RESOURCES.pods, {
        ...pod,
        status: { ...pod.status, conditions: [...pod.status!.conditions!, { type: 'DisruptionTarget', status: 'True', reason, lastTransitionTime: long }] },
      });
    }
    const target = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    const reset = await waitFor('condition reset', async () => {
      const pod = await plane.client.get<Pod>(RESOURCES.pods, 'target-api', ns);
      return target(pod)?.status === 'False' && pod;
    });
    expect(target(reset)).toEqual({ type: 'DisruptionTarget', status: 'False', lastTransitionTime: expect.any(String) });
    expect(target(await plane.client.get<Pod>(RESOURCES.pods, 'target-kubelet', ns))).toEqual(expect.objectContaining({ status: 'True' }));
  });

  it('blocks an eviction until the budget allows it, as the conformance test does', async () => {
    await createBudget('gate', 'gate', { minAvailable: 3 });
    for (const name of ['gate-1', 'gate-2', 'gate-3']) await createPod(name, 'gate');
    await statusIs('gate', { currentHealthy: 3, disruptionsAllowed: 0 });
    const evict = (name: string) =>
      plane.client.createSubresource(RESOURCES.pods, name, ns, 'eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns } });
    const refused = await evict('gate-1').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isApiError(refused, 'TooManyRequests')).toBe(true);
    expect((refused as { details?: { causes?: { type: string }[] } }).details?.causes).toEqual([expect.objectContaining({ type: 'DisruptionBudget' })]);

    await plane.client.patch<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets, 'gate', { spec: { minAvailable: 2 } }, { namespace: ns });
    await statusIs('gate', { observedGeneration: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    await evict('gate-1');
    // No kubelet finishes the graceful delete: the pod stays terminating, which no longer counts, and its entry goes.
    await statusIs('gate', { currentHealthy: 2, disruptionsAllowed: 0, disruptedPods: undefined });
    expect((await plane.client.get<Pod>(RESOURCES.pods, 'gate-1', ns)).metadata.deletionTimestamp).toBeDefined();

    await plane.client.delete(RESOURCES.poddisruptionbudgets, 'gate', ns);
    await evict('gate-2');
  });
});
