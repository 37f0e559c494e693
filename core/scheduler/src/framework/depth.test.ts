import { describe, expect, it } from 'vitest';
import type { NodeInfo, SchedulerPlugin } from '@skiff/kernel';
import { makeNode, makePod } from '../test-support/objects.js';
import { feasibleNodesToFind, schedulePod } from './cycle.js';
import { addPodToNodeInfo, cloneNodeInfo, createNodeInfo } from './node-info.js';
import { cloneCycleState, defaultNormalizeScore } from './plugin-helpers.js';
import { buildProfile } from './profile.js';
import { PluginRegistry } from './registry.js';
import { SchedulerCache } from '../cache/scheduler-cache.js';
import { SchedulingQueue } from '../queue/scheduling-queue.js';

function profileOf(...plugins: SchedulerPlugin[]) {
  const registry = new PluginRegistry();
  for (const plugin of plugins) registry.register(plugin);
  return buildProfile(registry);
}

const many = (count: number): NodeInfo[] => Array.from({ length: count }, (_, i) => createNodeInfo(makeNode(`node-${i}`)));

describe('node sampling (percentageOfNodesToScore)', () => {
  it('looks at every node of a small cluster and at an adaptive share of a large one, at least 100', () => {
    expect(feasibleNodesToFind(50)).toBe(50);
    expect(feasibleNodesToFind(1000)).toBe(420); // 50 − 1000/125 = 42 %
    expect(feasibleNodesToFind(5000)).toBe(500); // 50 − 40 = 10 %
    expect(feasibleNodesToFind(20_000)).toBe(1000); // never under 5 %
    expect(feasibleNodesToFind(150, 10)).toBe(100);
    expect(feasibleNodesToFind(5000, 100)).toBe(5000);
  });

  it('stops filtering once enough nodes fit, and starts the next cycle where the last one stopped', () => {
    const seen: string[] = [];
    const counting: SchedulerPlugin = { name: 'Count', filter: (_s, _p, node) => (seen.push(node.node.metadata.name!), null) };
    const profile = profileOf(counting);
    const nodes = many(1000);
    schedulePod(profile, new Map(), makePod('a'), nodes);
    expect(seen).toHaveLength(420);
    expect(seen[0]).toBe('node-0');
    seen.length = 0;
    schedulePod(profile, new Map(), makePod('b'), nodes);
    expect(seen[0]).toBe('node-420');
  });
});

describe('PreFilterResult', () => {
  it('narrows the nodes to those every narrowing preFilter names', () => {
    const onlyTwo: SchedulerPlugin = { name: 'OnlyTwo', preFilter: () => ({ nodeNames: new Set(['node-1', 'node-2']) }) };
    const notOne: SchedulerPlugin = { name: 'NotOne', preFilter: () => ({ nodeNames: new Set(['node-2', 'node-3']) }) };
    const result = schedulePod(profileOf(onlyTwo, notOne), new Map(), makePod('p'), many(5));
    expect(result.nodeName).toBe('node-2');
  });
});

describe('nominated node', () => {
  it('is tried first and taken when it fits', () => {
    const pod = { ...makePod('p'), status: { nominatedNodeName: 'node-7' } };
    const result = schedulePod(
      profileOf({ name: 'Any', filter: () => null, score: (_s, _p, n) => (n.node.metadata.name === 'node-1' ? 100 : 0) }),
      new Map(),
      pod,
      many(10),
    );
    expect(result.nodeName).toBe('node-7');
  });
});

describe('plugin helpers', () => {
  it('normalizes scores to 0…100, reversed when asked, as upstream', () => {
    const scores = new Map([
      ['a', 2],
      ['b', 4],
      ['c', 0],
    ]);
    defaultNormalizeScore(scores);
    expect([...scores.values()]).toEqual([50, 100, 0]);
    const reversed = new Map([
      ['a', 1],
      ['b', 3],
    ]);
    defaultNormalizeScore(reversed, true);
    expect([...reversed.values()]).toEqual([67, 0]);
  });

  it('clones state values that can clone and copies NodeInfo lists for a what-if', () => {
    const counter = {
      n: 1,
      clone() {
        return { ...this };
      },
    };
    const state = new Map<string, unknown>([
      ['c', counter],
      ['shared', { x: 1 }],
    ]);
    const copy = cloneCycleState(state);
    expect(copy.get('c')).not.toBe(counter);
    expect(copy.get('shared')).toBe(state.get('shared'));
    const info = createNodeInfo(makeNode('n'));
    const what = cloneNodeInfo(info);
    addPodToNodeInfo(what, makePod('x', { cpu: '1' }));
    expect(info.pods).toHaveLength(0);
    expect(info.requested.milliCPU).toBe(0);
    expect(what.requested.milliCPU).toBe(1000);
  });
});

describe('the cache as a snapshot', () => {
  it('keeps the nodes with affinity pods and the image counts as pods and nodes come and go', () => {
    const cache = new SchedulerCache();
    const withImages = (name: string, images: string[]) => ({
      ...makeNode(name),
      status: { ...makeNode(name).status, images: [{ names: images, sizeBytes: 1 }] },
    });
    cache.setNode(withImages('a', ['docker.io/library/nginx:latest']));
    cache.setNode(withImages('b', ['nginx']));
    cache.setNode(makeNode('c'));
    const snapshot = cache.snapshot();
    expect(snapshot.imageNodeCount('nginx')).toBe(2);
    expect(snapshot.imageNodeCount('docker.io/library/nginx:latest')).toBe(2);
    const anti = makePod('anti', undefined, {
      nodeName: 'b',
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: {} }] } },
    });
    cache.setPod('default/anti', anti);
    expect(snapshot.nodesWithAffinityPods.map((n) => n.node.metadata.name)).toEqual(['b']);
    expect(snapshot.nodesWithRequiredAntiAffinityPods.map((n) => n.node.metadata.name)).toEqual(['b']);
    cache.removePod('default/anti');
    expect(snapshot.nodesWithRequiredAntiAffinityPods).toEqual([]);
    cache.removeNode('a');
    expect(snapshot.imageNodeCount('nginx')).toBe(1);
  });
});

describe('the queue and cluster events', () => {
  it('brings back only the parked pods whose rejecting plugins registered the event', () => {
    const events: Record<string, { resource: 'Node' | 'Pod'; actions: ['Add'] | ['Delete'] }[]> = {
      Fit: [{ resource: 'Pod', actions: ['Delete'] }],
      Taints: [{ resource: 'Node', actions: ['Add'] }],
    };
    const queue = new SchedulingQueue({
      backoffInitialMs: 0,
      interested: (plugin, event) =>
        (events[plugin] ?? []).some((e) => e.resource === event.resource && event.actions.some((a) => (e.actions as string[]).includes(a))),
    });
    queue.add('default/a', makePod('a'));
    queue.add('default/b', makePod('b'));
    return (async () => {
      const a = (await queue.pop())!;
      const b = (await queue.pop())!;
      queue.requeueUnschedulable(a.info.key, a.cycle, new Set(['Fit']));
      queue.requeueUnschedulable(b.info.key, b.cycle, new Set(['Taints']));
      queue.moveAllToActive({ resource: 'Node', actions: ['Add'] });
      expect((await queue.pop())!.info.key).toBe('default/b');
      queue.moveAllToActive({ resource: 'Pod', actions: ['Delete'] });
      expect((await queue.pop())!.info.key).toBe('default/a');
      queue.close();
    })();
  });

  it('holds gated pods back until an update lifts the gate', async () => {
    const queue = new SchedulingQueue({ gate: (pod) => (pod.spec.schedulingGates?.length ? 'SchedulingGates' : undefined) });
    queue.add('default/g', makePod('g', undefined, { schedulingGates: [{ name: 'wait' }] }));
    expect(queue.gated()).toEqual(['default/g']);
    queue.add('default/g', makePod('g'));
    expect(queue.gated()).toEqual([]);
    expect((await queue.pop())!.info.key).toBe('default/g');
    queue.close();
  });
});

describe('Skip', () => {
  it('leaves out the filter of a plugin whose preFilter skips, and the score of one whose preScore skips', () => {
    const calls: string[] = [];
    const skipping: SchedulerPlugin = {
      name: 'Skipping',
      preFilter: () => ({ code: 'Skip', reasons: [] }),
      filter: () => (calls.push('filter'), { code: 'Unschedulable', reasons: ['never'] }),
      preScore: () => ({ code: 'Skip', reasons: [] }),
      score: () => (calls.push('score'), 100),
    };
    const other: SchedulerPlugin = { name: 'Other', score: (_s, _p, n) => (n.node.metadata.name === 'node-1' ? 100 : 0) };
    const result = schedulePod(profileOf(skipping, other), new Map(), makePod('p'), many(3));
    expect(result.nodeName).toBe('node-1');
    expect(calls).toEqual([]);
  });
});
