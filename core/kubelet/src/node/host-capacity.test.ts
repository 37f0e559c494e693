import { statfs } from 'node:fs/promises';
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Node } from '@skiff/api';
import { startControlPlane, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from '../test-support/node-plugins.js';
import { hostCapacity } from './host-capacity.js';

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane(nodePlugins({}, { capacity: { source: 'host', pods: 50 } }), { config: { nodes: 1, logLevel: 'silent' } });
});
afterAll(() => cluster?.stop());

describe('node capacity from the host', () => {
  it("reads this machine's CPUs, memory and the data dir's file system", async () => {
    const disk = await statfs(tmpdir());
    expect(await hostCapacity(tmpdir(), 110)).toEqual({
      cpu: String(availableParallelism()),
      memory: `${Math.floor(totalmem() / 1024)}Ki`,
      ephemeralStorage: `${Math.floor((disk.blocks * disk.bsize) / 1024)}Ki`,
      pods: 110,
    });
  });

  it('registers the node with them, allocatable alike, and healthy conditions', async () => {
    const node = await cluster.client.get<Node>(RESOURCES.nodes, 'node-1');
    expect(node.status?.capacity).toMatchObject({ cpu: String(availableParallelism()), memory: `${Math.floor(totalmem() / 1024)}Ki`, pods: '50' });
    expect(node.status?.capacity?.['ephemeral-storage']).toMatch(/^\d+Ki$/);
    expect(node.status?.allocatable).toEqual(node.status?.capacity);
    expect(node.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
  });
});
