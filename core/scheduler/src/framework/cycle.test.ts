import { describe, expect, it } from 'vitest';
import type { NodeInfo, SchedulerPlugin } from '@skiff/kernel';
import { makeNode, makePod, seededRandom } from '../test-support/objects.js';
import { schedulePod, pickBest } from './cycle.js';
import { fitErrorMessage } from './fit-error.js';
import { createNodeInfo } from './node-info.js';
import { buildProfile } from './profile.js';
import { PluginRegistry } from './registry.js';

function profileOf(...plugins: SchedulerPlugin[]) {
  const registry = new PluginRegistry();
  for (const plugin of plugins) registry.register(plugin);
  return buildProfile(registry);
}

const nodes = (...names: string[]): NodeInfo[] => names.map((name) => createNodeInfo(makeNode(name)));

/** Scores each node by a fixed table. */
const tableScore = (name: string, table: Record<string, number>, extra: Partial<SchedulerPlugin> = {}): SchedulerPlugin => ({
  name,
  score: (_state, _pod, node) => table[node.node.metadata.name!] ?? 0,
  ...extra,
});

describe('schedulePod', () => {
  it('says there are no nodes when the cluster is empty', () => {
    const result = schedulePod(profileOf(), new Map(), makePod('p'), []);
    expect(result).toMatchObject({ code: 'UnschedulableAndUnresolvable', message: 'no nodes available to schedule pods' });
  });

  it('counts filter reasons over nodes in the Kubernetes message', () => {
    const reject: SchedulerPlugin = {
      name: 'Reject',
      filter: (_state, _pod, node) =>
        node.node.metadata.name === 'node-1'
          ? { code: 'UnschedulableAndUnresolvable', reasons: ['node(s) were unschedulable'] }
          : { code: 'Unschedulable', reasons: ['Insufficient cpu', 'Insufficient memory'] },
    };
    const result = schedulePod(profileOf(reject), new Map(), makePod('p'), nodes('node-1', 'node-2', 'node-3'));
    expect(result.nodeName).toBeUndefined();
    expect(result).toMatchObject({
      code: 'Unschedulable',
      message: '0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu, 2 Insufficient memory.',
    });
    if (result.nodeName === undefined) expect(result.failures.get('node-2')).toMatchObject({ plugin: 'Reject' });
  });

  it('stops at the first filter that rejects a node', () => {
    const calls: string[] = [];
    const first: SchedulerPlugin = { name: 'First', filter: () => (calls.push('first'), { code: 'Unschedulable', reasons: ['no'] }) };
    const second: SchedulerPlugin = { name: 'Second', filter: () => (calls.push('second'), null) };
    schedulePod(profileOf(first, second), new Map(), makePod('p'), nodes('node-1'));
    expect(calls).toEqual(['first']);
  });

  it('lets a preFilter reject the pod outright, and share state with its filter', () => {
    const plugin: SchedulerPlugin = {
      name: 'Gate',
      preFilter: (state, pod) => {
        state.set('gate', pod.metadata.name);
        return pod.metadata.name === 'blocked' ? { code: 'UnschedulableAndUnresolvable', reasons: ['pod is gated'] } : null;
      },
      filter: (state, _pod, node) => (state.get('gate') === 'ok' && node.node.metadata.name === 'node-2' ? null : { code: 'Unschedulable', reasons: ['x'] }),
    };
    const profile = profileOf(plugin);
    expect(schedulePod(profile, new Map(), makePod('blocked'), nodes('node-1'))).toMatchObject({ message: '0/1 nodes are available: pod is gated.' });
    expect(schedulePod(profile, new Map(), makePod('ok'), nodes('node-1', 'node-2'))).toMatchObject({ nodeName: 'node-2' });
  });

  it('reports a filter error as an error, not as a misfit', () => {
    const broken: SchedulerPlugin = { name: 'Broken', filter: () => ({ code: 'Error', reasons: ['boom'] }) };
    expect(schedulePod(profileOf(broken), new Map(), makePod('p'), nodes('node-1'))).toMatchObject({
      code: 'Error',
      message: 'running "Broken" filter plugin: boom',
      plugin: 'Broken',
      extensionPoint: 'Filter',
    });
  });

  describe("a plugin that throws is an error naming it and the extension point, in kube-scheduler's words", () => {
    const boom = new TypeError("Cannot read properties of undefined (reading 'labels')");
    const thrower = () => {
      throw boom;
    };
    const cases: [string, SchedulerPlugin, string][] = [
      ['PreFilter', { name: 'Gate', preFilter: thrower }, `running PreFilter plugin "Gate": ${boom.message}`],
      [
        'Filter',
        { name: 'Fit', filter: (_s, _p, node) => (node.node.metadata.name === 'node-2' ? thrower() : null) },
        `running "Fit" filter plugin: ${boom.message}`,
      ],
      ['PreScore', { name: 'Spread', preScore: thrower, score: () => 1 }, `running PreScore plugin "Spread": ${boom.message}`],
      ['Score', { name: 'PreferLabel', score: thrower }, `running Score plugins: plugin "PreferLabel" failed with: ${boom.message}`],
      [
        'NormalizeScore',
        { name: 'Balance', score: () => 1, normalizeScore: thrower },
        `running Normalize on Score plugins: plugin "Balance" failed with: ${boom.message}`,
      ],
    ];
    it.each(cases)('%s', (extensionPoint, plugin, message) => {
      const result = schedulePod(profileOf(plugin), new Map(), makePod('p'), nodes('node-1', 'node-2'));
      expect(result).toEqual({ code: 'Error', message, failures: new Map(), totalNodes: 2, plugin: plugin.name, extensionPoint, cause: boom });
    });

    it('Score, with normalizeScore present', () => {
      const plugin: SchedulerPlugin = { name: 'Both', score: thrower, normalizeScore: () => undefined };
      expect(schedulePod(profileOf(plugin), new Map(), makePod('p'), nodes('node-1', 'node-2'))).toMatchObject({
        message: `running Score plugins: plugin "Both" failed with: ${boom.message}`,
        extensionPoint: 'Score',
      });
    });
  });

  it('picks the highest weighted sum of scores', () => {
    const registry = new PluginRegistry();
    registry.register(tableScore('A', { 'node-1': 100, 'node-2': 0, 'node-3': 50 }));
    registry.register(tableScore('B', { 'node-1': 0, 'node-2': 100, 'node-3': 50 }));
    const info = nodes('node-1', 'node-2', 'node-3');
    const even = buildProfile(registry, {
      plugins: {
        score: {
          enabled: [
            { name: 'A', weight: 1 },
            { name: 'B', weight: 1 },
          ],
        },
      },
    });
    const leanB = buildProfile(registry, {
      plugins: {
        score: {
          enabled: [
            { name: 'A', weight: 1 },
            { name: 'B', weight: 3 },
          ],
        },
      },
    });
    expect(schedulePod(leanB, new Map(), makePod('p'), info)).toMatchObject({ nodeName: 'node-2', score: 300 });
    const picks = new Set(Array.from({ length: 30 }, (_, i) => schedulePod(even, new Map(), makePod('p'), info, seededRandom(i)).nodeName));
    expect(picks).toEqual(new Set(['node-1', 'node-2', 'node-3']));
  });

  it('applies normalizeScore before the weight', () => {
    const inverted = tableScore(
      'Inverted',
      { 'node-1': 10, 'node-2': 90 },
      {
        normalizeScore: (_state, _pod, scores) => {
          for (const [name, score] of scores) scores.set(name, 100 - score);
        },
      },
    );
    expect(schedulePod(profileOf(inverted), new Map(), makePod('p'), nodes('node-1', 'node-2'))).toMatchObject({ nodeName: 'node-1', score: 90 });
  });

  it('skips scoring when only one node fits', () => {
    let scored = false;
    const onlyTwo: SchedulerPlugin = {
      name: 'OnlyTwo',
      filter: (_s, _p, node) => (node.node.metadata.name === 'node-2' ? null : { code: 'Unschedulable', reasons: ['no'] }),
    };
    const spy: SchedulerPlugin = { name: 'Spy', score: () => ((scored = true), 1) };
    expect(schedulePod(profileOf(onlyTwo, spy), new Map(), makePod('p'), nodes('node-1', 'node-2'))).toMatchObject({ nodeName: 'node-2', feasibleNodes: 1 });
    expect(scored).toBe(false);
  });

  it('breaks ties at random, each tied node equally likely', () => {
    const counts = [0, 0, 0, 0];
    const random = seededRandom(42);
    for (let i = 0; i < 4000; i++) counts[pickBest([5, 9, 9, 9], random)]!++;
    expect(counts[0]).toBe(0);
    for (const count of counts.slice(1)) expect(count).toBeGreaterThan(1100);
  });
});

describe('fitErrorMessage', () => {
  it('sorts the counted reasons and appends the post-filter message', () => {
    const failures = new Map([
      ['a', { code: 'Unschedulable' as const, reasons: ['Too many pods'] }],
      ['b', { code: 'Unschedulable' as const, reasons: ['Insufficient cpu'] }],
      ['c', { code: 'Unschedulable' as const, reasons: ['Insufficient cpu'] }],
    ]);
    expect(fitErrorMessage(3, failures, 'preemption: not helpful.')).toBe(
      '0/3 nodes are available: 1 Too many pods, 2 Insufficient cpu. preemption: not helpful.',
    );
  });
});
