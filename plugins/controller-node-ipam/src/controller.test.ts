import { RESOURCES, type Event, type Node } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodeIpam from './index.js';

function createNode(client: ApiClient, name: string, podCIDR?: string): Promise<Node> {
  return client.create<Node>(RESOURCES.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: podCIDR ? { podCIDR, podCIDRs: [podCIDR] } : {} });
}

const rangeOf = (client: ApiClient, name: string) =>
  waitFor(`a pod range on ${name}`, async () => (await client.get<Node>(RESOURCES.nodes, name)).spec?.podCIDR);

describe('node IPAM against a real API server', () => {
  let plane: ControlPlane;

  beforeAll(async () => {
    plane = await startControlPlane([[nodeIpam, { clusterCIDR: '10.20.0.0/22', nodeCIDRMaskSize: 24 }]]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('gives a new node the lowest free block after the first, skipping ranges nodes already hold', async () => {
    await createNode(plane.client, 'held', '10.20.1.0/24');
    await createNode(plane.client, 'a');
    expect(await rangeOf(plane.client, 'a')).toBe('10.20.2.0/24');
    const a = await plane.client.get<Node>(RESOURCES.nodes, 'a');
    expect(a.spec?.podCIDRs).toEqual(['10.20.2.0/24']);
    await createNode(plane.client, 'b');
    expect(await rangeOf(plane.client, 'b')).toBe('10.20.3.0/24');
  });

  it('records CIDRNotAvailable when the range is used up, and hands out a deleted node’s block again', async () => {
    await createNode(plane.client, 'c');
    await waitFor('a CIDRNotAvailable event on c', async () => {
      const events = await plane.client.list<Event>(RESOURCES.events);
      return events.items.some((event) => event.involvedObject.name === 'c' && event.reason === 'CIDRNotAvailable');
    });
    expect((await plane.client.get<Node>(RESOURCES.nodes, 'c')).spec?.podCIDR).toBeUndefined();
    await plane.client.delete(RESOURCES.nodes, 'a');
    expect(await rangeOf(plane.client, 'c')).toBe('10.20.2.0/24');
  });

  it('stops the start with one line for a bad range', async () => {
    await expect(startControlPlane([[nodeIpam, { clusterCIDR: '10.20.0.1/22' }]])).rejects.toThrow(
      /option clusterCIDR: "10.20.0.1\/22": the host bits are set/,
    );
    await expect(startControlPlane([[nodeIpam, { clusterCIDR: '10.20.0.0/22', nodeCIDRMaskSize: 20 }]])).rejects.toThrow(/nodeCIDRMaskSize: must lie between/);
  });
});
