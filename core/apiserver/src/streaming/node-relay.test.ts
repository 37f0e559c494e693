import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { NodeConnection, NodeConnections, NodeResourceUsage } from '@skiff/kernel';
import { PrimaryNodes, serveNodeRelay } from './node-relay.js';

// The relay between an API server worker thread and the kubelets of the primary thread, over a real MessageChannel.

const USAGE: NodeResourceUsage = {
  nodeName: 'node-1',
  node: { timestamp: '2026-03-01T10:00:10.000Z', windowSeconds: 10, cpuNanoCores: 370_000_000, memoryWorkingSetBytes: 448 * 1024 * 1024 },
  pods: [
    {
      namespace: 'default',
      name: 'web',
      uid: 'u',
      containers: [{ name: 'app', timestamp: '2026-03-01T10:00:10.000Z', windowSeconds: 10, cpuNanoCores: 250_000_000, memoryWorkingSetBytes: 1024 }],
    },
  ],
};

function primaryWith(connections: Record<string, Partial<NodeConnection>>): { worker: PrimaryNodes; close(): void } {
  const { port1, port2 } = new MessageChannel();
  const registry: NodeConnections = { register: () => () => undefined, get: (name) => connections[name] as NodeConnection | undefined };
  serveNodeRelay(port1, () => registry);
  return {
    worker: new PrimaryNodes(port2),
    close: () => {
      port1.close();
      port2.close();
    },
  };
}

describe('the node relay: resource usage', () => {
  it("answers the primary's kubelet's usage to a worker in one call", async () => {
    const relay = primaryWith({ 'node-1': { resourceUsage: async () => USAGE } });
    try {
      const connection = await relay.worker.get('node-1');
      expect(await connection!.resourceUsage!()).toEqual(USAGE);
      expect(await relay.worker.get('node-2')).toBeUndefined();
    } finally {
      relay.close();
    }
  });

  it('fails the call, naming the node, when its kubelet reports no usage', async () => {
    const relay = primaryWith({ 'node-1': {} });
    try {
      const connection = await relay.worker.get('node-1');
      await expect(connection!.resourceUsage!()).rejects.toThrow('the kubelet of node "node-1" reports no resource usage');
    } finally {
      relay.close();
    }
  });
});
