import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Node, type Pod } from '@skiff/api';
import { Kernel, type NodeInfo, type SchedulerPlugin } from '@skiff/kernel';
import { startTestCluster, waitFor, type TestCluster } from '@skiff/testing';
import plugin, { SCHEDULER_PLUGIN_NAME } from './index.js';

function pod(name: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } };
}

function nodeInfo(name: string, labels: Record<string, string>): NodeInfo {
  const node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } };
  const amounts = { milliCPU: 4000, memory: 8 * 1024 ** 3, pods: 110 };
  return { node, pods: [], allocatable: amounts, requested: { milliCPU: 0, memory: 0, pods: 0 } };
}

/** Loads the plugin into a bare kernel and collects what it registers, as the scheduler does at start. */
function registered(options: Record<string, unknown>): SchedulerPlugin {
  const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);
  const plugins: SchedulerPlugin[] = [];
  kernel.hooks.schedulerPlugins.call({
    register: (p) => void plugins.push(p),
    get: (name) => plugins.find((p) => p.name === name),
    list: () => plugins,
  });
  expect(plugins.map((p) => p.name)).toEqual([SCHEDULER_PLUGIN_NAME]);
  return plugins[0]!;
}

describe('the scheduler plugin', () => {
  const ssd = nodeInfo('fast', { disk: 'ssd' });
  const hdd = nodeInfo('slow', { disk: 'hdd' });
  const bare = nodeInfo('plain', {});

  it('scores nodes with the label highest', () => {
    const scheduler = registered({ label: 'disk', value: 'ssd' });
    expect([ssd, hdd, bare].map((node) => scheduler.score!(new Map(), pod('p'), node))).toEqual([100, 0, 0]);
    const anyValue = registered({ label: 'disk' });
    expect([ssd, hdd, bare].map((node) => anyValue.score!(new Map(), pod('p'), node))).toEqual([100, 100, 0]);
  });

  it('filters nodes out only when the label is required', () => {
    expect(registered({ label: 'disk', value: 'ssd' }).filter!(new Map(), pod('p'), hdd)).toBeNull();
    const strict = registered({ label: 'disk', value: 'ssd', required: true });
    expect(strict.filter!(new Map(), pod('p'), ssd)).toBeNull();
    expect(strict.filter!(new Map(), pod('p'), hdd)).toEqual({ code: 'UnschedulableAndUnresolvable', reasons: ["node(s) didn't have label disk=ssd"] });
  });

  it('offers its weight to the scheduler profile', () => {
    expect(registered({ label: 'disk', weight: 5 }).defaultWeight).toBe(5);
  });

  it('checks its options when the plugin loads', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, {})).toThrow('option "label" is required');
  });
});

describe('in a whole cluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    // Every node carries kubernetes.io/hostname; prefer node-2 of two nodes.
    cluster = await startTestCluster({ nodes: 2, plugins: [[plugin, { label: 'kubernetes.io/hostname', value: 'node-2' }]] });
  });
  afterAll(() => cluster?.stop());

  it('puts pods on the preferred node, where the default scores would spread them', async () => {
    await waitFor('both nodes Ready', async () => {
      const { items } = await cluster.client.list<Node>(RESOURCES.nodes);
      const ready = items.filter((node) => node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === 2;
    });
    const names = ['web-1', 'web-2', 'web-3', 'web-4'];
    for (const name of names) await cluster.client.create(RESOURCES.pods, pod(name), 'default');
    const nodes = await waitFor('every pod scheduled', async () => {
      const pods = await Promise.all(names.map((name) => cluster.client.get<Pod>(RESOURCES.pods, name, 'default')));
      return pods.every((p) => p.spec.nodeName) && pods.map((p) => p.spec.nodeName);
    });
    expect(nodes).toEqual(['node-2', 'node-2', 'node-2', 'node-2']);
  });
});
