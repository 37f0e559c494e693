import { RESOURCES, type Event, type Pod } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import schedulerPlugin from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import defaultPreemption from './index.js';
import { node, pod } from './test-support.js';

let plane: ControlPlane;
let client: ApiClient;

beforeAll(async () => {
  plane = await startControlPlane([schedulerPlugin, resourcesFit, defaultPreemption], { enabled: [], config: { logLevel: 'silent' } });
  client = plane.client;
  await client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'busy' } });
  await client.create(RESOURCES.nodes, node('busy-1', '2'));
}, 60_000);

afterAll(async () => {
  await plane?.stop();
});

async function failedScheduling(name: string): Promise<string[]> {
  const events = (await client.list<Event>(RESOURCES.events, 'busy')).items;
  return events.filter((event) => event.involvedObject.name === name && event.reason === 'FailedScheduling').map((event) => event.message!);
}

describe('DefaultPreemption in the scheduler', () => {
  it('nominates the preemptor to the node it made room on, and says why when it cannot', async () => {
    await client.create(RESOURCES.pods, pod('busy', 'low', '2', 1), 'busy');
    await waitFor('low bound', async () => (await client.get<Pod>(RESOURCES.pods, 'low', 'busy')).spec.nodeName === 'busy-1');

    await client.create(RESOURCES.pods, pod('busy', 'lower', '1', 0), 'busy');
    await waitFor('lower rejected', async () => (await failedScheduling('lower')).length > 0);
    expect(await failedScheduling('lower')).toContain(
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..',
    );

    await client.create(RESOURCES.pods, pod('busy', 'high', '2', 100), 'busy');
    const high = await waitFor('high nominated', async () => {
      const current = await client.get<Pod>(RESOURCES.pods, 'high', 'busy');
      return current.status?.nominatedNodeName && current;
    });
    expect(high.status?.nominatedNodeName).toBe('busy-1');
    expect((await client.get<Pod>(RESOURCES.pods, 'low', 'busy')).metadata.deletionTimestamp).toBeTruthy();
    expect(await failedScheduling('high')).toContain('0/1 nodes are available: 1 Insufficient cpu.');
  });
});
