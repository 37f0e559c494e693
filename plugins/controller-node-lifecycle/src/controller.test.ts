import { RESOURCES, type Event, type Lease, type Node, type Pod, type Taint, type Toleration } from '@skiff/api';
import kubelet from '@skiff/kubelet';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodeLifecycle from './index.js';

// Nodes the test makes itself run no kubelet: the test renews their Leases (or, for a silent node, does
// not), and pods bound to them stay terminating once deleted, so their last state can be read. node-1 is
// a simulated kubelet's, heartbeating every second.

let plane: ControlPlane;
const heartbeats: NodeJS.Timeout[] = [];
beforeAll(async () => {
  plane = await startControlPlane(
    [
      [nodeLifecycle, { nodeMonitorPeriodSeconds: 0.5, nodeMonitorGracePeriodSeconds: 3, nodeStartupGracePeriodSeconds: 3 }],
      [kubelet, { heartbeatSeconds: 1 }],
      criSimulated,
      networkIpam,
    ],
    { config: { nodes: 1, logLevel: 'silent' } },
  );
});
afterAll(async () => {
  for (const timer of heartbeats) clearInterval(timer);
  await plane?.stop();
});

const ns = 'default';
const microTime = () => new Date().toISOString().replace('Z', '000Z');
const getNode = (name: string) => plane.client.get<Node>(RESOURCES.nodes, name);
const getPod = (name: string) => plane.client.get<Pod>(RESOURCES.pods, name, ns);

/** A Node with a Ready condition and a Lease, renewed every 500 ms while `renew` says so. */
async function createNode(name: string, options: { renew: boolean }): Promise<{ stop(): void }> {
  const node = await plane.client.create<Node>(RESOURCES.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name } });
  await postReady(node);
  await plane.client.create<Lease>(
    RESOURCES.leases,
    {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime() },
    },
    'kube-node-lease',
  );
  const timer = setInterval(() => void renewLease(name).catch(() => undefined), 500);
  if (options.renew) heartbeats.push(timer);
  else clearInterval(timer);
  return { stop: () => clearInterval(timer) };
}

async function renewLease(name: string): Promise<void> {
  const lease = await plane.client.get<Lease>(RESOURCES.leases, name, 'kube-node-lease');
  await plane.client.update<Lease>(RESOURCES.leases, { ...lease, spec: { ...lease.spec, renewTime: microTime() } });
}

/** Posts status as a kubelet would: Ready True with a fresh heartbeat. */
async function postReady(node: Node): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const fresh = await getNode(node.metadata.name!);
  await plane.client.updateStatus<Node>(RESOURCES.nodes, {
    ...fresh,
    status: {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now },
      ],
    },
  });
}

async function createPod(name: string, nodeName: string, tolerations: Toleration[] = []): Promise<Pod> {
  const pod = await plane.client.create<Pod>(
    RESOURCES.pods,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName, tolerations, containers: [{ name: 'c', image: 'nginx' }] } },
    ns,
  );
  return plane.client.updateStatus<Pod>(RESOURCES.pods, { ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });
}

async function setTaints(nodeName: string, taints: Taint[]): Promise<void> {
  for (;;) {
    const node = await getNode(nodeName);
    const kept = (node.spec?.taints ?? []).filter((t) => t.key.startsWith('node.kubernetes.io/'));
    try {
      await plane.client.update<Node>(RESOURCES.nodes, { ...node, spec: { ...node.spec, taints: [...kept, ...taints] } });
      return;
    } catch {
      // Conflict with the controller's own write: read again.
    }
  }
}

const deleted = (name: string) => async () => (await getPod(name)).metadata.deletionTimestamp !== undefined;
const taintsOf = async (name: string) => ((await getNode(name)).spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();

async function eventMessages(podName: string): Promise<string[]> {
  const events = (await plane.client.list<Event>(RESOURCES.events, ns)).items;
  return events.filter((e) => e.involvedObject.name === podName && e.reason === 'TaintManagerEviction').map((e) => e.message ?? '');
}

const dedicated: Taint = { key: 'dedicated', value: 'db', effect: 'NoExecute' };
const tolerateDedicated = (seconds?: number): Toleration => ({
  key: 'dedicated',
  operator: 'Exists',
  effect: 'NoExecute',
  ...(seconds === undefined ? {} : { tolerationSeconds: seconds }),
});

describe('node lifecycle controller against a real API server', () => {
  it('evicts pods from a node with a NoExecute taint: at once, after tolerationSeconds, or never', async () => {
    await createNode('tainted', { renew: true });
    await createPod('intolerant', 'tainted');
    await createPod('patient', 'tainted', [tolerateDedicated(2)]);
    await createPod('forever', 'tainted', [tolerateDedicated()]);

    const taintedAt = Date.now();
    await setTaints('tainted', [dedicated]);
    await waitFor('intolerant evicted', deleted('intolerant'), { timeoutMs: 2000 });
    const intolerantMs = Date.now() - taintedAt;
    const intolerant = await getPod('intolerant');
    expect(intolerant.status?.conditions).toContainEqual(
      expect.objectContaining({
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'DeletionByTaintManager',
        message: 'Taint manager: deleting due to NoExecute taint',
      }),
    );
    expect(await getPod('patient')).not.toHaveProperty('metadata.deletionTimestamp');

    await waitFor('patient evicted', deleted('patient'), { timeoutMs: 5000, intervalMs: 50 });
    const patientMs = Date.now() - taintedAt;
    expect(intolerantMs).toBeLessThan(1000);
    expect(patientMs).toBeGreaterThanOrEqual(1900);
    expect(patientMs).toBeLessThan(3500);

    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await getPod('forever')).not.toHaveProperty('metadata.deletionTimestamp');
    await waitFor('eviction event', async () => (await eventMessages('intolerant')).includes('Marking for deletion Pod default/intolerant'));
  });

  it('cancels a waiting eviction when the taint goes', async () => {
    await createNode('briefly-tainted', { renew: true });
    await createPod('waiting', 'briefly-tainted', [tolerateDedicated(2)]);
    await setTaints('briefly-tainted', [dedicated]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await setTaints('briefly-tainted', []);
    await waitFor('cancel event', async () => (await eventMessages('waiting')).includes('Cancelling deletion of Pod default/waiting'));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await getPod('waiting')).not.toHaveProperty('metadata.deletionTimestamp');
  });

  it('marks a node whose Lease stops renewing Unknown and unreachable, and lifts that when it is heard from again', async () => {
    const silentSince = Date.now();
    await createNode('silent', { renew: false });
    await createPod('served', 'silent', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }]);

    const node = await waitFor(
      'Ready Unknown',
      async () => {
        const n = await getNode('silent');
        return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'Unknown' && n;
      },
      { timeoutMs: 8000 },
    );
    expect(Date.now() - silentSince).toBeGreaterThanOrEqual(3000);
    const conditions = Object.fromEntries(node.status!.conditions!.map((c) => [c.type, c]));
    expect(conditions.Ready).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      expect(conditions[type]).toMatchObject({ status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' });
    }
    const unreachable = ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule'];
    await waitFor('unreachable taints', async () => JSON.stringify(await taintsOf('silent')) === JSON.stringify(unreachable), { timeoutMs: 3000 });
    expect((await getNode('silent')).spec!.taints!.find((t) => t.effect === 'NoExecute')!.timeAdded).toBeTruthy();
    await waitFor('pod marked not ready', async () => (await getPod('served')).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False');
    expect(await getPod('served')).not.toHaveProperty('metadata.deletionTimestamp');

    await renewLease('silent');
    await postReady(node);
    await waitFor('taints lifted', async () => (await taintsOf('silent')).length === 0, { timeoutMs: 3000 });
  });

  it('leaves a simulated kubelet’s node Ready and untainted, and taints it while cordoned', async () => {
    const node = await getNode('node-1');
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(node.spec?.taints ?? []).toEqual([]);

    await plane.client.patch(RESOURCES.nodes, 'node-1', { spec: { unschedulable: true } }, { patchType: 'merge' });
    await waitFor('cordon taint', async () => (await taintsOf('node-1')).join() === 'node.kubernetes.io/unschedulable:NoSchedule');
    await plane.client.patch(RESOURCES.nodes, 'node-1', { spec: { unschedulable: false } }, { patchType: 'merge' });
    await waitFor('cordon taint lifted', async () => (await taintsOf('node-1')).length === 0);
  });
});
