import { RESOURCES, type Lease, type Node } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodeLifecycle from './index.js';

// No kubelet here: the test plays the nodes, so that every node of the cluster can fall silent at once.

let plane: ControlPlane;
const renewals: NodeJS.Timeout[] = [];
beforeAll(async () => {
  plane = await startControlPlane([[nodeLifecycle, { nodeMonitorPeriodSeconds: 0.5, nodeMonitorGracePeriodSeconds: 2, nodeStartupGracePeriodSeconds: 2 }]], {
    config: { logLevel: 'silent' },
  });
});
afterAll(async () => {
  for (const timer of renewals) clearInterval(timer);
  await plane?.stop();
});

const microTime = () => new Date().toISOString().replace('Z', '000Z');
const taintsOf = async (name: string) => ((await plane.client.get<Node>(RESOURCES.nodes, name)).spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();

async function createNode(name: string, renew: boolean): Promise<void> {
  await plane.client.create<Node>(RESOURCES.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name } });
  await plane.client.create<Lease>(
    RESOURCES.leases,
    { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, renewTime: microTime() } },
    'kube-node-lease',
  );
  if (!renew) return;
  renewals.push(
    setInterval(() => {
      void plane.client
        .get<Lease>(RESOURCES.leases, name, 'kube-node-lease')
        .then((lease) => plane.client.update<Lease>(RESOURCES.leases, { ...lease, spec: { ...lease.spec, renewTime: microTime() } }))
        .catch(() => undefined);
    }, 300),
  );
}

describe('node lifecycle controller when every node is silent', { timeout: 30_000 }, () => {
  it('adds no NoExecute taint while no node is ready, and resumes once one is', async () => {
    await createNode('lonely', false);
    await waitFor('unreachable NoSchedule', async () => (await taintsOf('lonely')).join() === 'node.kubernetes.io/unreachable:NoSchedule', {
      timeoutMs: 10_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await taintsOf('lonely')).toEqual(['node.kubernetes.io/unreachable:NoSchedule']);

    // A node that posts Ready and renews its Lease ends the all-nodes-down mode.
    await createNode('healthy', true);
    const healthy = await plane.client.get<Node>(RESOURCES.nodes, 'healthy');
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await plane.client.updateStatus<Node>(RESOURCES.nodes, {
      ...healthy,
      status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: now, lastTransitionTime: now }] },
    });
    await waitFor(
      'unreachable NoExecute',
      async () => (await taintsOf('lonely')).join() === 'node.kubernetes.io/unreachable:NoExecute,node.kubernetes.io/unreachable:NoSchedule',
      // The healthy node gives every node a fresh grace period (2 s) first; a loaded machine may add several more.
      { timeoutMs: 10_000 },
    );
    expect(await taintsOf('healthy')).toEqual([]);
  });
});
