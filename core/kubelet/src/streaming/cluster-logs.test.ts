import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from '../test-support/node-plugins.js';

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane(nodePlugins(), { config: { nodes: 1, logLevel: 'silent' } });
});
afterAll(() => cluster?.stop());

describe('node connections in a cluster', () => {
  it("gives the API server each running node's pod logs, and forgets the node when its kubelet stops", async () => {
    const connections = cluster.kernel.resolve('nodeConnections');
    await cluster.client.create<Pod>(RESOURCES.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
    });
    const pod = await waitFor('the pod to run', async () => {
      const current = await cluster.client.get<Pod>(RESOURCES.pods, 'hello', 'default');
      return current.status?.phase === 'Running' && current;
    });
    const connection = connections.get(pod.spec.nodeName!)!;
    expect(connection).toBeDefined();
    const ref = { namespace: 'default', name: 'hello', uid: pod.metadata.uid! };
    let text = '';
    for await (const chunk of await connection.containerLogs(ref, 'main', {}, new AbortController().signal)) text += Buffer.from(chunk).toString();
    expect(text).toBe('simulated container main started (image busybox:1.36)\n');

    await cluster.stop();
    expect(connections.get(pod.spec.nodeName!)).toBeUndefined();
  });
});
