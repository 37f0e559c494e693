import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Event, type Node, type Pod } from '@skiff/api';
import { definePlugin, type ApiClient, type SchedulerPlugin } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import schedulerPlugin from './index.js';
import { makeNode } from './test-support/objects.js';

/** A filter wanting nodes labelled size=big for pods labelled needs=big. */
const bigOnly: SchedulerPlugin = {
  name: 'BigOnly',
  filter: (_state, pod, info) =>
    pod.metadata.labels?.needs !== 'big' || info.node.metadata.labels?.size === 'big' ? null : { code: 'Unschedulable', reasons: ['node(s) were too small'] },
};
/** Records the order of the binding-side extension points. */
const calls: string[] = [];
const recorder: SchedulerPlugin = {
  name: 'Recorder',
  reserve: (_s, pod, node) => (calls.push(`reserve ${pod.metadata.name} ${node}`), null),
  permit: (_s, pod) => (calls.push(`permit ${pod.metadata.name}`), null),
  postBind: (_s, pod) => void calls.push(`postBind ${pod.metadata.name}`),
};
const testPlugins = definePlugin({
  name: 'test-scheduler-plugins',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap('test-scheduler-plugins', (registry) => {
      registry.register(bigOnly);
      registry.register(recorder);
    });
  },
});

let controlPlane: ControlPlane;
let client: ApiClient;
beforeAll(async () => {
  // No kubelets: the tests create the Node objects themselves.
  controlPlane = await startControlPlane([schedulerPlugin, testPlugins], { config: { logLevel: 'silent' } });
  client = controlPlane.client;
});
afterAll(() => controlPlane?.stop());

const createNode = (node: Node) => client.create(RESOURCES.nodes, node);
const createPod = (name: string, labels: Record<string, string> = {}, schedulerName?: string) =>
  client.create(
    RESOURCES.pods,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels },
      spec: { containers: [{ name: 'c', image: 'nginx' }], ...(schedulerName ? { schedulerName } : {}) },
    },
    'default',
  );
const getPod = (name: string) => client.get<Pod>(RESOURCES.pods, name, 'default');

describe('the scheduler on a real API server', () => {
  it('says there are no nodes, then binds the pod once a node appears', async () => {
    await createPod('early-1');
    const condition = await waitFor('early-1 to be unschedulable', async () =>
      (await getPod('early-1')).status?.conditions?.find((c) => c.type === 'PodScheduled'),
    );
    expect(condition).toMatchObject({ status: 'False', reason: 'Unschedulable', message: 'no nodes available to schedule pods' });
    await createNode(makeNode('small-1'));
    const bound = await waitFor('early-1 to be bound', async () => (await getPod('early-1')).spec.nodeName);
    expect(bound).toBe('small-1');
    await waitFor('postBind', async () => calls.includes('postBind early-1'));
    expect(calls.filter((call) => call.includes('early-1'))).toEqual(['reserve early-1 small-1', 'permit early-1', 'postBind early-1']);
    const events = await waitFor('both events', async () => {
      const items = (await client.list<Event>(RESOURCES.events, 'default')).items.filter((e) => e.involvedObject.name === 'early-1');
      const reasons = items.map((e) => e.reason);
      return reasons.includes('FailedScheduling') && reasons.includes('Scheduled') && items;
    });
    expect(events.find((e) => e.reason === 'Scheduled')).toMatchObject({
      type: 'Normal',
      message: 'Successfully assigned default/early-1 to small-1',
      source: { component: 'default-scheduler' },
    });
  });

  it('retries a pod that fits nowhere when a node that fits joins', async () => {
    await createPod('big-1', { needs: 'big' });
    const condition = await waitFor('big-1 to be unschedulable', async () =>
      (await getPod('big-1')).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'),
    );
    expect(condition!.message).toBe('0/1 nodes are available: 1 node(s) were too small.');
    await createNode(makeNode('big-node', undefined, { metadata: { name: 'big-node', labels: { size: 'big' } } }));
    expect(await waitFor('big-1 to be bound', async () => (await getPod('big-1')).spec.nodeName)).toBe('big-node');
  });

  it('skips not-ready nodes', async () => {
    await createNode({
      ...makeNode('sick'),
      metadata: { name: 'sick', labels: { size: 'big' } },
      status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'False' }] },
    });
    for (const name of ['big-2', 'big-3', 'big-4']) await createPod(name, { needs: 'big' });
    const nodes = await waitFor('the big pods to be bound', async () => {
      const bound = await Promise.all(['big-2', 'big-3', 'big-4'].map(async (name) => (await getPod(name)).spec.nodeName));
      return bound.every(Boolean) && bound;
    });
    expect(new Set(nodes)).toEqual(new Set(['big-node']));
  });

  it('leaves pods for other schedulers alone', async () => {
    await createPod('other-1', {}, 'my-scheduler');
    await createPod('mine-1');
    await waitFor('mine-1 to be bound', async () => (await getPod('mine-1')).spec.nodeName);
    const other = await getPod('other-1');
    expect(other.spec.nodeName).toBeUndefined();
    expect(other.status?.conditions?.find((c) => c.type === 'PodScheduled')).toBeUndefined();
  });
});
