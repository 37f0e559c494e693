import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Node, type Pod } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import schedulerPlugin, { buildProfile, createNodeInfo, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import schedulingGates from './index.js';
import { createSchedulingGates, gatesReason } from './scheduling-gates.js';

function node(name: string): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function pod(name: string, gates: string[] = []): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'main', image: 'nginx' }], ...(gates.length ? { schedulingGates: gates.map((gate) => ({ name: gate })) } : {}) },
  };
}

describe('SchedulingGates', () => {
  it("holds a gated pod back with upstream's words, lets an ungated one in", () => {
    const plugin = createSchedulingGates();
    expect(plugin.preEnqueue!(pod('p', ['gate-a', 'gate-b']))).toEqual({
      code: 'UnschedulableAndUnresolvable',
      reasons: ['waiting for scheduling gates: [gate-a gate-b]'],
    });
    expect(plugin.preEnqueue!(pod('q'))).toBeNull();
    expect(gatesReason(pod('r', ['example.com/quota']))).toBe('waiting for scheduling gates: [example.com/quota]');
    expect(plugin.events).toEqual([{ resource: 'Pod', actions: ['UpdatePodSchedulingGatesEliminated'] }]);
  });

  it('sits at preEnqueue only: a profile places an ungated pod as before', () => {
    const registry = new PluginRegistry();
    registry.register(createSchedulingGates());
    const profile = buildProfile(registry);
    expect(profile.preEnqueue.map((p) => p.name)).toEqual(['SchedulingGates']);
    expect(profile.filter).toEqual([]);
    expect(schedulePod(profile, new Map(), pod('p'), [createNodeInfo(node('node-1'))])).toMatchObject({ nodeName: 'node-1' });
  });
});

describe('SchedulingGates in a running scheduler', () => {
  let plane: ControlPlane;
  let client: ApiClient;
  beforeAll(async () => {
    plane = await startControlPlane([[schedulerPlugin, { thread: 'main' }], schedulingGates], { config: { logLevel: 'silent' } });
    client = plane.client;
    await client.create(RESOURCES.nodes, node('node-1'));
  });
  afterAll(() => plane?.stop());

  const nodeOf = async (name: string) => (await client.get<Pod>(RESOURCES.pods, name, 'default')).spec.nodeName;

  it('binds a gated pod only once its last gate is removed', async () => {
    await client.create(RESOURCES.pods, pod('gated', ['gate-a', 'gate-b']), 'default');
    await client.create(RESOURCES.pods, pod('free'), 'default');
    // The ungated pod created after it is bound: the scheduler has seen (and held back) the gated one.
    expect(await waitFor('free to be bound', () => nodeOf('free'))).toBe('node-1');
    expect(await nodeOf('gated')).toBeUndefined();

    const oneGate = await client.get<Pod>(RESOURCES.pods, 'gated', 'default');
    oneGate.spec.schedulingGates = [{ name: 'gate-b' }];
    await client.update(RESOURCES.pods, oneGate);
    const other = await client.create(RESOURCES.pods, pod('free-2'), 'default');
    expect(await waitFor('free-2 to be bound', () => nodeOf(other.metadata.name!))).toBe('node-1');
    expect(await nodeOf('gated')).toBeUndefined();

    const noGates = await client.get<Pod>(RESOURCES.pods, 'gated', 'default');
    delete noGates.spec.schedulingGates;
    await client.update(RESOURCES.pods, noGates);
    expect(await waitFor('gated to be bound', () => nodeOf('gated'))).toBe('node-1');
  });
});
