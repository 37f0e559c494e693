import { RESOURCES, type Event, type Node, type Pod, type Taint, type Toleration } from '@skiff/api';
import kubelet from '@skiff/kubelet';
import defaultTolerationSeconds from '@skiff/plugin-admission-default-toleration-seconds';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodeLifecycle from './index.js';

// Upstream's NoExecuteTaintManager [Conformance] tests, step by step (with shorter tolerations): pods created
// as the e2e framework creates them (no node, DefaultTolerationSeconds, metadata.deletionGracePeriodSeconds 1),
// placed by the scheduler on a simulated kubelet's node, the test's taint added and removed by a strategic
// merge patch carrying the node's resourceVersion (client-go's PatchNodeTaints), and deletions seen on a
// watch, which only shows a pod's DELETED once the kubelet has stopped it.

const NS = 'default';
const WAIT = { timeoutMs: 20_000 };
const TAINT_KEY = 'kubernetes.io/e2e-evict-taint-key';
let plane: ControlPlane;
let nodeName: string;

beforeAll(async () => {
  plane = await startControlPlane([nodeLifecycle, defaultTolerationSeconds, scheduler, [kubelet, { heartbeatSeconds: 1 }], criSimulated, networkIpam], {
    enabled: ['nodelifecycle'],
    config: { nodes: 1, logLevel: 'silent' },
  });
  nodeName = await waitFor(
    'a ready node',
    async () =>
      (await plane.client.list<Node>(RESOURCES.nodes)).items.find((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))?.metadata
        .name,
    WAIT,
  );
}, 60_000);
afterAll(() => plane?.stop());

const testTaint = (): Taint => ({ key: TAINT_KEY, value: 'evictTaintVal', effect: 'NoExecute', timeAdded: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });

function taintsTestPod(name: string, group: string, tolerationSeconds?: number): Pod {
  const toleration: Toleration = { key: TAINT_KEY, value: 'evictTaintVal', effect: 'NoExecute', ...(tolerationSeconds ? { tolerationSeconds } : {}) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { group }, deletionGracePeriodSeconds: 1 },
    spec: { containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.9' }], tolerations: [toleration] },
  } as Pod;
}

/** client-go's PatchNodeTaints: the whole new taint list, and the resourceVersion read, so a lost race is a conflict. */
async function patchTaints(change: (taints: Taint[]) => Taint[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const node = await plane.client.get<Node>(RESOURCES.nodes, nodeName);
    const patch = { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: change(node.spec?.taints ?? []) } };
    try {
      await plane.client.patch(RESOURCES.nodes, nodeName, patch, { patchType: 'strategic' });
      return;
    } catch (err) {
      if (attempt > 5) throw err;
    }
  }
}
const addTestTaint = () => patchTaints((taints) => [...taints.filter((t) => t.key !== TAINT_KEY), testTaint()]);
const removeTestTaint = () => patchTaints((taints) => taints.filter((t) => t.key !== TAINT_KEY));

/** Deletions of the group's pods as a watch shows them, with when they were seen. */
function watchDeletions(group: string): { seen: Map<string, number>; stop(): void } {
  const seen = new Map<string, number>();
  const abort = new AbortController();
  void (async () => {
    try {
      for await (const event of plane.client.watch<Pod>(RESOURCES.pods, NS, { labelSelector: `group=${group}`, signal: abort.signal }))
        if (event.type === 'DELETED') seen.set((event.object as Pod).metadata.name!, Date.now());
    } catch {
      // Stopped.
    }
  })();
  return { seen, stop: () => abort.abort() };
}

async function runPod(pod: Pod): Promise<Pod> {
  await plane.client.create(RESOURCES.pods, pod, NS);
  return waitFor(
    `${pod.metadata.name} running`,
    async () => {
      const current = await plane.client.get<Pod>(RESOURCES.pods, pod.metadata.name!, NS);
      return current.status?.phase === 'Running' ? current : undefined;
    },
    WAIT,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('NoExecuteTaintManager [Conformance] paths on a kubelet’s node', { timeout: 60_000 }, () => {
  it('evicts pods with minTolerationSeconds: each when its own toleration runs out', async () => {
    const deletions = watchDeletions('taint-eviction-b');
    try {
      const first = await runPod(taintsTestPod('taint-eviction-b1', 'taint-eviction-b', 1));
      const second = taintsTestPod('taint-eviction-b2', 'taint-eviction-b', 3);
      second.spec.nodeSelector = { 'kubernetes.io/hostname': nodeName };
      await runPod(second);
      expect(first.spec.nodeName).toBe(nodeName);
      expect(first.metadata.deletionGracePeriodSeconds).toBeUndefined();
      expect(first.spec.tolerations?.map((t) => t.key)).toEqual([TAINT_KEY, 'node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);

      const taintedAt = Date.now();
      await addTestTaint();
      await waitFor('both pods gone', async () => deletions.seen.size === 2, WAIT);
      const firstMs = deletions.seen.get('taint-eviction-b1')! - taintedAt;
      const secondMs = deletions.seen.get('taint-eviction-b2')! - taintedAt;
      expect(firstMs).toBeGreaterThanOrEqual(900);
      expect(secondMs).toBeGreaterThanOrEqual(2900);
      expect(secondMs).toBeGreaterThan(firstMs);
      const events = (await plane.client.list<Event>(RESOURCES.events, NS)).items.filter((e) => e.reason === 'TaintManagerEviction').map((e) => e.message);
      expect(events).toEqual(
        expect.arrayContaining(['Marking for deletion Pod default/taint-eviction-b1', 'Marking for deletion Pod default/taint-eviction-b2']),
      );
    } finally {
      deletions.stop();
      await removeTestTaint();
    }
  });

  it('removing the taint at once cancels the eviction: the pod outlives its toleration', async () => {
    const deletions = watchDeletions('taint-eviction-4');
    try {
      await runPod(taintsTestPod('taint-eviction-4', 'taint-eviction-4', 2));
      await addTestTaint();
      expect((await plane.client.get<Node>(RESOURCES.nodes, nodeName)).spec?.taints?.some((t) => t.key === TAINT_KEY)).toBe(true);
      await removeTestTaint();
      await sleep(3500);
      expect(deletions.seen.size).toBe(0);
      const pod = await plane.client.get<Pod>(RESOURCES.pods, 'taint-eviction-4', NS);
      expect(pod.metadata.deletionTimestamp).toBeUndefined();
      expect(pod.status?.phase).toBe('Running');
    } finally {
      deletions.stop();
    }
  });
});
