import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Event, type Pod } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from './test-support/node-plugins.js';

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane(nodePlugins(), { config: { nodes: 1, logLevel: 'silent' } });
});
afterAll(() => cluster?.stop());

/** A pod bound to node-1 directly (no scheduler in between), as a user or a DaemonSet may bind one. */
const bound = (name: string, hostPort: number, hostIP?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { nodeName: 'node-1', containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80, hostPort, ...(hostIP ? { hostIP } : {}) }] }] },
});
const getPod = (name: string) => cluster.client.get<Pod>(RESOURCES.pods, name, 'default');

describe("the kubelet's admission", () => {
  it('fails a pod bound to the node whose host port another pod there holds: NodePorts, with an event; the holder runs on', async () => {
    await cluster.client.create(RESOURCES.pods, bound('holder', 54322));
    await waitFor('the holder to run', async () => (await getPod('holder')).status?.phase === 'Running');
    await cluster.client.create(RESOURCES.pods, bound('clash', 54322, '127.0.0.1'));
    const failed = await waitFor('the second pod to fail', async () => {
      const current = await getPod('clash');
      return current.status?.phase === 'Failed' && current;
    });
    expect(failed.status).toMatchObject({ reason: 'NodePorts', message: 'Pod was rejected: Predicate NodePorts failed' });
    expect(failed.status?.containerStatuses ?? []).toEqual([]);
    const events = (await cluster.client.list<Event>(RESOURCES.events, 'default')).items.filter((event) => event.involvedObject.name === 'clash');
    expect(events.map((event) => [event.type, event.reason, event.message])).toContainEqual([
      'Warning',
      'NodePorts',
      'Pod was rejected: Predicate NodePorts failed',
    ]);
    expect((await getPod('holder')).status?.phase).toBe('Running');

    // Once the holder is gone the port is free again.
    await cluster.client.delete(RESOURCES.pods, 'holder', 'default');
    await waitFor(
      'the holder to be gone',
      async () => !(await cluster.client.list<Pod>(RESOURCES.pods, 'default')).items.some((p) => p.metadata.name === 'holder'),
    );
    await cluster.client.create(RESOURCES.pods, bound('next', 54322));
    await waitFor('the next pod to run', async () => (await getPod('next')).status?.phase === 'Running');
  });

  it('admits a pod whose node selector matches a label given to the node after the kubelet last wrote it', async () => {
    await cluster.client.patch(RESOURCES.nodes, 'node-1', { metadata: { labels: { disk: 'fast' } } });
    await cluster.client.create<Pod>(
      RESOURCES.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'selective', namespace: 'default' },
        spec: { nodeName: 'node-1', nodeSelector: { disk: 'fast' }, containers: [{ name: 'c', image: 'nginx:1.27' }] },
      },
      'default',
    );
    await waitFor('the pod to run', async () => (await getPod('selective')).status?.phase === 'Running');
  });
});
