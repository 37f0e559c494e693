import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '@skiff/api';
import { buildProfile, createNodeInfo, PluginRegistry, schedulePod, SchedulingQueue } from '@skiff/scheduler';
import { comparePods, createPrioritySort } from './priority-sort.js';

function pod(name: string, priority?: number, creationTimestamp?: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...(creationTimestamp ? { creationTimestamp } : {}) },
    spec: { containers: [{ name: 'main', image: 'nginx' }], ...(priority !== undefined ? { priority } : {}) },
  };
}

function node(name: string, pods: number): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: { allocatable: { cpu: '4', memory: '8Gi', pods }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

describe('PrioritySort', () => {
  it('orders by priority, higher first, then by creationTimestamp, older first', () => {
    const pods = [
      pod('low-old', 0, '2024-01-01T00:00:00Z'),
      pod('high-new', 1000, '2024-01-03T00:00:00Z'),
      pod('default-new', undefined, '2024-01-02T00:00:00Z'),
      pod('high-old', 1000, '2024-01-01T12:00:00.5Z'),
      pod('negative', -5, '2023-01-01T00:00:00Z'),
    ];
    expect([...pods].sort(comparePods).map((p) => p.metadata.name)).toEqual(['high-old', 'high-new', 'low-old', 'default-new', 'negative']);
    expect(comparePods(pod('a', 1, '2024-01-01T00:00:00Z'), pod('b', 1, '2024-01-01T00:00:00Z'))).toBe(0);
    // a pod not stored yet (no timestamp) goes after those that are
    expect(comparePods(pod('unsaved', 1), pod('saved', 1, '2024-01-01T00:00:00Z'))).toBeGreaterThan(0);
  });

  it('is the profile’s queue sort: the scheduling queue pops the important pod first, and it is placed', async () => {
    const registry = new PluginRegistry();
    registry.register(createPrioritySort());
    const profile = buildProfile(registry);
    expect(profile.queueSort?.name).toBe('PrioritySort');
    const queue = new SchedulingQueue({ compare: profile.queueSort!.queueSort! });
    queue.add('default/batch', pod('batch', 0, '2024-01-01T00:00:00Z'));
    queue.add('default/web', pod('web', 2000, '2024-01-02T00:00:00Z'));
    const first = await queue.pop();
    expect(first?.info.key).toBe('default/web');
    expect(schedulePod(profile, new Map(), first!.info.pod, [createNodeInfo(node('node-1', 110))])).toMatchObject({ nodeName: 'node-1' });
    expect((await queue.pop())?.info.key).toBe('default/batch');
    queue.close();
  });
});
