import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Node, type Service } from '@skiff/api';
import { definePlugin, type ServiceProxyContext } from '@skiff/kernel';
import { startControlPlane, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from './test-support/node-plugins.js';

interface Seen {
  context: ServiceProxyContext;
  services: string[];
  synced: boolean;
  closed: boolean;
}
const created: Seen[] = [];

/** A service proxy that only records what the kubelet hands it, and what its client may read. */
const recordingProxy = definePlugin({
  name: 'test-recording-proxy',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.serviceProxies.tap('test-recording-proxy', (registry) =>
      registry.register({
        name: 'recording',
        async create(context) {
          const seen: Seen = { context, services: [], synced: false, closed: false };
          created.push(seen);
          // What kube-proxy's identity (system:node-proxier) may do: list Services and EndpointSlices.
          seen.services = (await context.client.list<Service>(RESOURCES.services)).items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
          await context.client.list(RESOURCES.endpointslices);
          return {
            name: 'recording',
            synced: async () => void (seen.synced = true),
            close: async () => void (seen.closed = true),
          };
        },
      }),
    );
  },
});

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane([...nodePlugins({}, { serviceProxy: 'recording', nodeIP: '192.0.2.10' }), recordingProxy], {
    config: { nodes: 2, logLevel: 'silent' },
  });
});
afterAll(() => cluster?.stop());

describe('the service proxy a kubelet runs', () => {
  it('is created once per node after the Node is registered, with its address, pod CIDR and an identity that reads Services', () => {
    expect(created.map((seen) => seen.context.nodeName).sort()).toEqual(['node-1', 'node-2']);
    const second = created.find((seen) => seen.context.nodeName === 'node-2')!;
    expect(second.context).toMatchObject({ nodeIPs: ['192.0.2.10'], podCIDR: '10.244.2.0/24', index: 1 });
    // Both lists answered (a refusal would have failed the kubelet's start).
    expect(second.services).toEqual(expect.any(Array));
    expect(created.every((seen) => seen.synced && !seen.closed)).toBe(true);
  });

  it("reports the kubelet's nodeIP as the InternalIP", async () => {
    const node = await cluster.client.get<Node>(RESOURCES.nodes, 'node-1');
    expect(node.status?.addresses).toContainEqual({ type: 'InternalIP', address: '192.0.2.10' });
  });

  it('is closed when the node stops', async () => {
    await cluster.stop();
    expect(created.every((seen) => seen.closed)).toBe(true);
  });
});
