import { RESOURCES, type Node, type Service } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import serviceLB from './index.js';

async function node(client: ApiClient, name: string, ip: string, labels?: Record<string, string>): Promise<void> {
  const created = await client.create<Node>(RESOURCES.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name, ...(labels && { labels }) } });
  await client.updateStatus<Node>(RESOURCES.nodes, {
    ...created,
    status: {
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
    },
  });
}

const ingressOf = async (client: ApiClient, name: string) => (await client.get<Service>(RESOURCES.services, name, 'default')).status?.loadBalancer?.ingress;

describe('service-lb controller against a real API server', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([serviceLB]);
    await node(plane.client, 'node-b', '192.168.0.12');
    await node(plane.client, 'node-a', '192.168.0.11');
    await node(plane.client, 'edge', '192.168.0.99', { 'node.kubernetes.io/exclude-from-external-load-balancers': '' });
  });
  afterAll(() => plane?.stop());

  it('gives a LoadBalancer Service the nodes InternalIPs, follows node changes, and clears them when the type changes', async () => {
    const { client } = plane;
    await client.create(
      RESOURCES.services,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
      'default',
    );
    const expected = [
      { ip: '192.168.0.11', ipMode: 'VIP' },
      { ip: '192.168.0.12', ipMode: 'VIP' },
    ];
    expect(await waitFor('the ingress', async () => ((await ingressOf(client, 'lb'))?.length === 2 ? ingressOf(client, 'lb') : undefined))).toEqual(expected);

    await node(client, 'node-c', '192.168.0.13');
    await waitFor('the new node in the ingress', async () => (await ingressOf(client, 'lb'))?.length === 3);

    await client.patch(RESOURCES.services, 'lb', { spec: { type: 'ClusterIP' } }, { namespace: 'default' });
    await waitFor('the ingress to be cleared', async () => (await ingressOf(client, 'lb')) === undefined);
  });

  it('leaves LoadBalancer Services with a loadBalancerClass to their own implementation', async () => {
    const { client } = plane;
    await client.create(
      RESOURCES.services,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'classy' },
        spec: { type: 'LoadBalancer', loadBalancerClass: 'example.com/lb', ports: [{ port: 80 }] },
      },
      'default',
    );
    await client.create(
      RESOURCES.services,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'plain' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
      'default',
    );
    await waitFor('the plain one to get its ingress', async () => (await ingressOf(client, 'plain'))?.length);
    expect(await ingressOf(client, 'classy')).toBeUndefined();
  });

  it("leaves the load-balancer status someone wrote on a ClusterIP Service (upstream's service status lifecycle test)", async () => {
    const { client } = plane;
    const created = await client.create<Service>(
      RESOURCES.services,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'written' }, spec: { type: 'ClusterIP', ports: [{ port: 80 }] } },
      'default',
    );
    await client.updateStatus<Service>(RESOURCES.services, { ...created, status: { loadBalancer: { ingress: [{ ip: '203.0.113.1' }] } } });
    // Another write to the Service, and a LoadBalancer Service synced after it, show the controller has seen both.
    await client.patch(RESOURCES.services, 'written', { metadata: { labels: { seen: 'yes' } } }, { namespace: 'default' });
    await client.create(
      RESOURCES.services,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'after' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
      'default',
    );
    await waitFor('the later LoadBalancer Service synced', async () => (await ingressOf(client, 'after'))?.length);
    expect(await ingressOf(client, 'written')).toEqual([{ ip: '203.0.113.1' }]);
  });
});
