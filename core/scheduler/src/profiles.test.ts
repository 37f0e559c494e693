import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod } from '@skiff/api';
import { definePlugin, type ApiClient, type SchedulerHandle, type SchedulerPlugin } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import schedulerPlugin from './index.js';
import { makeNode } from './test-support/objects.js';

/** Only nodes labelled lane=<args.lane>: the second profile turns it on with its own args. */
const lane = (wanted: string): SchedulerPlugin => ({
  name: 'Lane',
  filter: (_state, _pod, info) =>
    info.node.metadata.labels?.lane === wanted ? null : { code: 'UnschedulableAndUnresolvable', reasons: [`node(s) were not in lane ${wanted}`] },
  withArgs: (args) => lane(String(args.lane)),
});
/** Refuses every node for pods labelled stuck=yes, and then nominates node "fast-1" for them, as preemption would. */
const handles = new Map<string, SchedulerHandle>();
const nominate: SchedulerPlugin = {
  name: 'Nominate',
  init: (h) => void handles.set(h.profileName, h),
  filter: (_state, pod) => (pod.metadata.labels?.stuck === 'yes' ? { code: 'Unschedulable', reasons: ['node(s) were busy'] } : null),
  postFilter: (_state, pod) => (pod.metadata.labels?.stuck === 'yes' ? { nominatedNodeName: 'fast-1', reasons: ['preemption: made room.'] } : null),
};
const testPlugins = definePlugin({
  name: 'test-profile-plugins',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap('test-profile-plugins', (registry) => {
      registry.register(lane('slow'));
      registry.register(nominate);
    });
  },
});

let controlPlane: ControlPlane;
let client: ApiClient;
beforeAll(async () => {
  controlPlane = await startControlPlane(
    [
      [
        schedulerPlugin,
        {
          profiles: [
            { schedulerName: 'default-scheduler', plugins: { filter: { disabled: [{ name: 'Lane' }] } } },
            { schedulerName: 'fast-lane', pluginConfig: [{ name: 'Lane', args: { lane: 'fast' } }] },
          ],
        },
      ],
      testPlugins,
    ],
    { config: { logLevel: 'silent' } },
  );
  client = controlPlane.client;
  await client.create(RESOURCES.nodes, makeNode('slow-1', undefined, { metadata: { name: 'slow-1', labels: { lane: 'slow' } } }));
  await client.create(RESOURCES.nodes, makeNode('fast-1', undefined, { metadata: { name: 'fast-1', labels: { lane: 'fast' } } }));
});
afterAll(() => controlPlane?.stop());

const createPod = (name: string, labels: Record<string, string> = {}, schedulerName?: string) =>
  client.create(RESOURCES.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...(schedulerName ? { schedulerName } : {}) },
  });
const getPod = (name: string) => client.get<Pod>(RESOURCES.pods, name, 'default');

describe('scheduler profiles', () => {
  it('schedules each pod with the profile its schedulerName names, each with its own plugin args', async () => {
    await createPod('fast-pod', {}, 'fast-lane');
    expect(await waitFor('fast-pod to be bound', async () => (await getPod('fast-pod')).spec.nodeName)).toBe('fast-1');
    for (let i = 0; i < 4; i++) await createPod(`plain-${i}`);
    const placed = await waitFor('the plain pods to be bound', async () => {
      const nodes = await Promise.all([0, 1, 2, 3].map(async (i) => (await getPod(`plain-${i}`)).spec.nodeName));
      return nodes.every(Boolean) && nodes;
    });
    // The default profile has no Lane filter: both nodes are open to it.
    expect(placed.every((node) => node === 'slow-1' || node === 'fast-1')).toBe(true);
  });

  it('leaves a pod alone whose schedulerName no profile has', async () => {
    await createPod('elsewhere', {}, 'someone-else');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const pod = await getPod('elsewhere');
    expect(pod.spec.nodeName).toBeUndefined();
    expect(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')).toBeUndefined();
  });

  it('records a postFilter nomination as status.nominatedNodeName, with its words in the message', async () => {
    await createPod('stuck', { stuck: 'yes' });
    const pod = await waitFor('stuck to be nominated', async () => {
      const current = await getPod('stuck');
      return current.status?.nominatedNodeName && current;
    });
    expect(pod.status?.nominatedNodeName).toBe('fast-1');
    expect(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')).toMatchObject({
      status: 'False',
      reason: 'Unschedulable',
      message: '0/2 nodes are available: 2 node(s) were busy. preemption: made room.',
    });
    // One instance without args serves both profiles: init ran once for each.
    expect([...handles.keys()].sort()).toEqual(['default-scheduler', 'fast-lane']);
    const handle = handles.get('default-scheduler')!;
    expect(handle.nominatedPods('fast-1').map((p) => p.metadata.name)).toEqual(['stuck']);
    const names = handle.snapshot().nodes.map((n) => n.node.metadata.name);
    expect(names.sort()).toEqual(['fast-1', 'slow-1']);
  });
});
