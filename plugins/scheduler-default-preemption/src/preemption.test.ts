import { RESOURCES, isApiError, type Event, type Pod, type PodDisruptionBudget } from '@skiff/api';
import type { ApiClient, SchedulingStatus } from '@skiff/kernel';
import nodeUnschedulable from '@skiff/plugin-scheduler-node-unschedulable';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import defaultPreemption from './index.js';
import { failedCycle, node, pdb, pod, preemptionProfile } from './test-support.js';

let plane: ControlPlane;
let client: ApiClient;
/** One per profile set up: each stops its informers. */
const stops: AbortController[] = [];

beforeAll(async () => {
  plane = await startControlPlane([resourcesFit, nodeUnschedulable, defaultPreemption], { enabled: [], config: { logLevel: 'silent' } });
  client = plane.client;
}, 60_000);

afterAll(async () => {
  for (const stop of stops) stop.abort();
  await plane?.stop();
});

/** A namespace and nodes labelled for one test; pods given a nodeName are bound there. */
async function cluster(test: string, nodes: ReturnType<typeof node>[], pods: Pod[] = [], pdbs: PodDisruptionBudget[] = []): Promise<void> {
  await client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: test } });
  for (const each of nodes) {
    each.metadata.labels = { ...each.metadata.labels, test };
    await client.create(RESOURCES.nodes, each);
  }
  for (const each of pods) await client.create(RESOURCES.pods, each, test);
  for (const each of pdbs) {
    const created = await client.create<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets, each, test);
    await client.updateStatus(RESOURCES.poddisruptionbudgets, { ...created, status: each.status });
  }
}

async function setup(test: string, args: Record<string, unknown> = {}) {
  const stop = new AbortController();
  stops.push(stop);
  return preemptionProfile(plane.kernel, client, stop.signal, `test=${test}`, args);
}

/** The pod as the API has it now; undefined once it is gone. */
async function current(ns: string, name: string): Promise<Pod | undefined> {
  try {
    return await client.get<Pod>(RESOURCES.pods, name, ns);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

async function events(ns: string, name: string, reason: string): Promise<Event[]> {
  const all = (await client.list<Event>(RESOURCES.events, ns)).items;
  return all.filter((event) => event.involvedObject.name === name && event.reason === reason);
}

describe('DefaultPreemption', () => {
  it('evicts the lower-priority pod on the full node: DisruptionTarget, a graceful delete, a Preempted event', async () => {
    const ns = 'full-node';
    await cluster(ns, [node('full-1', '4')], [pod(ns, 'mid', '2', 50, { nodeName: 'full-1' }), pod(ns, 'low', '2', 1, { nodeName: 'full-1' })]);
    const { profile, handle, plugin } = await setup(ns);
    // A lower-priority pod an earlier preemption nominated to the node loses its nomination.
    await client.create(RESOURCES.pods, pod(ns, 'waiting', '1', 20), ns);
    await client.patch(RESOURCES.pods, 'waiting', { status: { nominatedNodeName: 'full-1' } }, { namespace: ns, patchType: 'merge', subresource: 'status' });
    const high = await client.create<Pod>(RESOURCES.pods, pod(ns, 'high', '2', 100), ns);
    const { state, result } = await failedCycle(handle, profile, high);
    expect(result.message).toBe('0/1 nodes are available: 1 Insufficient cpu.');

    const outcome = await plugin.postFilter!(state, high, result.failures);
    expect(outcome).toEqual({ nominatedNodeName: 'full-1', reasons: [] });

    // Deleted gracefully: without a kubelet to finish it, the victim stays terminating.
    const low = await current(ns, 'low');
    expect(low?.metadata.deletionTimestamp).toBeTruthy();
    expect(low?.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'PreemptionByScheduler',
      message: 'default-scheduler: preempting to accommodate a higher priority pod',
    });
    expect((await current(ns, 'mid'))?.metadata.deletionTimestamp).toBeUndefined();
    await waitFor('the nomination cleared', async () => !(await current(ns, 'waiting'))?.status?.nominatedNodeName);
    await handle.recorder.flush();
    const preempted = await waitFor('the Preempted event', async () => {
      const found = await events(ns, 'low', 'Preempted');
      return found.length > 0 && found;
    });
    expect(preempted.map((e) => [e.type, e.message, e.source?.component])).toEqual([['Normal', 'Preempted by a pod on node full-1', 'default-scheduler']]);

    // While its victim terminates, the preemptor waits rather than evicting more (PodEligibleToPreemptOthers).
    await client.patch(RESOURCES.pods, 'high', { status: { nominatedNodeName: 'full-1' } }, { namespace: ns, patchType: 'merge', subresource: 'status' });
    const again = await client.get<Pod>(RESOURCES.pods, 'high', ns);
    await handle.refresh();
    const retried = await plugin.postFilter!(state, again, result.failures);
    expect(retried).toEqual({ code: 'Unschedulable', reasons: ['preemption: not eligible due to a terminating pod on the nominated node..'] });
    expect((await current(ns, 'mid'))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('evicts as few pods as it can: victims are reprieved from the highest priority down', async () => {
    const ns = 'reprieve';
    await cluster(
      ns,
      [node('reprieve-1', '4')],
      [pod(ns, 'a', '1', 10, { nodeName: 'reprieve-1' }), pod(ns, 'b', '2', 5, { nodeName: 'reprieve-1' }), pod(ns, 'c', '1', 1, { nodeName: 'reprieve-1' })],
    );
    const { profile, handle, plugin } = await setup(ns);
    const high = await client.create<Pod>(RESOURCES.pods, pod(ns, 'high', '2', 100), ns);
    const { state, result } = await failedCycle(handle, profile, high);
    expect(await plugin.postFilter!(state, high, result.failures)).toEqual({ nominatedNodeName: 'reprieve-1', reasons: [] });
    const terminating = async (name: string) => !!(await current(ns, name))?.metadata.deletionTimestamp;
    expect([await terminating('a'), await terminating('b'), await terminating('c')]).toEqual([false, true, false]);
  });

  it('prefers a node whose victims no PodDisruptionBudget protects', async () => {
    const ns = 'budgets';
    await cluster(
      ns,
      [node('budgets-1', '4'), node('budgets-2', '4')],
      [
        pod(ns, 'guarded', '4', 1, { nodeName: 'budgets-1', labels: { app: 'guarded' } }),
        pod(ns, 'free', '4', 1, { nodeName: 'budgets-2', labels: { app: 'free' } }),
      ],
      [pdb(ns, 'keep-guarded', { app: 'guarded' }, 0)],
    );
    // Both nodes are dry-run (at least 100 candidates are wanted), whichever the walk starts at.
    const { profile, handle, plugin } = await setup(ns);
    const high = await client.create<Pod>(RESOURCES.pods, pod(ns, 'high', '4', 100), ns);
    const { state, result } = await failedCycle(handle, profile, high);
    expect(await plugin.postFilter!(state, high, result.failures)).toEqual({ nominatedNodeName: 'budgets-2', reasons: [] });
    expect((await current(ns, 'guarded'))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await current(ns, 'free'))?.metadata.deletionTimestamp).toBeTruthy();
  });

  it('leaves a pod with preemptionPolicy Never waiting', async () => {
    const ns = 'never';
    await cluster(ns, [node('never-1', '2')], [pod(ns, 'low', '2', 1, { nodeName: 'never-1' })]);
    const { profile, handle, plugin } = await setup(ns);
    const high = await client.create<Pod>(RESOURCES.pods, pod(ns, 'high', '2', 100, { preemptionPolicy: 'Never' }), ns);
    const { state, result } = await failedCycle(handle, profile, high);
    expect(await plugin.postFilter!(state, high, result.failures)).toEqual({
      code: 'Unschedulable',
      reasons: ['preemption: not eligible due to preemptionPolicy=Never..'],
    });
    expect((await current(ns, 'low'))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('says why when no eviction would help, in upstream’s words', async () => {
    const ns = 'hopeless';
    const cordoned = node('hopeless-2', '8');
    cordoned.spec = { unschedulable: true };
    await cluster(ns, [node('hopeless-1', '2'), cordoned], [pod(ns, 'important', '2', 1000, { nodeName: 'hopeless-1' })]);
    const { profile, handle, plugin } = await setup(ns);
    const high = await client.create<Pod>(RESOURCES.pods, pod(ns, 'high', '2', 100), ns);
    const { state, result } = await failedCycle(handle, profile, high);
    const outcome = await plugin.postFilter!(state, high, result.failures);
    expect(outcome).toEqual({
      code: 'Unschedulable',
      reasons: ['preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling..'],
    });
    // As `kubectl describe pod` shows it once the scheduler appends the postFilter's words.
    expect(`${result.message} ${(outcome as NonNullable<SchedulingStatus>).reasons.join(' ')}`).toBe(
      '0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling..',
    );
    expect((await current(ns, 'important'))?.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('DefaultPreemptionArgs', () => {
  it('are checked as upstream checks them, through a profile’s pluginConfig', async () => {
    await expect(setup('args-percentage', { minCandidateNodesPercentage: 101 })).rejects.toThrow(
      'minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]',
    );
    await expect(setup('args-zero', { minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0 })).rejects.toThrow(
      'minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage',
    );
  });

  it('bound how many nodes are dry-run: with one candidate wanted, the first node that works is taken', async () => {
    // The dry run starts at a random node: fixed here at the first, the one whose victim matters more.
    const ns = 'sampled';
    await cluster(
      ns,
      [node('sampled-1', '4'), node('sampled-2', '4')],
      [pod(ns, 'big', '4', 50, { nodeName: 'sampled-1' }), pod(ns, 'small', '4', 1, { nodeName: 'sampled-2' })],
    );
    const { profile, handle, plugin } = await setup(ns, { minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 1 });
    const high = await client.create<Pod>(RESOURCES.pods, pod(ns, 'high', '4', 100), ns);
    const { state, result } = await failedCycle(handle, profile, high);
    const random = vi.spyOn(Math, 'random').mockReturnValue(0);
    try {
      expect(await plugin.postFilter!(state, high, result.failures)).toEqual({ nominatedNodeName: 'sampled-1', reasons: [] });
    } finally {
      random.mockRestore();
    }
    expect((await current(ns, 'big'))?.metadata.deletionTimestamp).toBeTruthy();
    expect((await current(ns, 'small'))?.metadata.deletionTimestamp).toBeUndefined();
  });
});
