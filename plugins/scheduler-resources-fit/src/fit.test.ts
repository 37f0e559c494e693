import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '@skiff/api';
import { buildProfile, createNodeInfo, NodeListSnapshot, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { createResourcesFit, insufficientResources } from './fit.js';

function node(name: string, allocatable: Record<string, string | number>): Node {
  return { metadata: { name }, status: { allocatable, conditions: [{ type: 'Ready', status: 'True' }] } };
}

function pod(name: string, requests?: Record<string, string | number>, nodeName?: string): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers: [{ name: 'main', image: 'nginx', ...(requests ? { resources: { requests } } : {}) }], ...(nodeName ? { nodeName } : {}) },
  };
}

const profile = () => {
  const registry = new PluginRegistry();
  registry.register(createResourcesFit());
  return buildProfile(registry);
};

const small = { cpu: '1', memory: '1Gi', pods: 10 };

describe('NodeResourcesFit', () => {
  it('fits a pod where its requests fit', () => {
    const nodes = [createNodeInfo(node('node-1', small), [pod('a', { cpu: '600m' }, 'node-1')]), createNodeInfo(node('node-2', small))];
    expect(schedulePod(profile(), new Map(), pod('p', { cpu: '500m' }), nodes)).toMatchObject({ nodeName: 'node-2' });
  });

  it('says "Insufficient cpu" for every node short of cpu', () => {
    const nodes = ['node-1', 'node-2', 'node-3'].map((name) => createNodeInfo(node(name, small)));
    const result = schedulePod(profile(), new Map(), pod('p', { cpu: '2' }), nodes);
    expect(result).toMatchObject({ code: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' });
  });

  it('lists every resource a node is short of', () => {
    const nodes = [createNodeInfo(node('node-1', small)), createNodeInfo(node('node-2', { cpu: '8', memory: '1Gi', pods: 10 }))];
    const result = schedulePod(profile(), new Map(), pod('p', { cpu: '2', memory: '2Gi' }), nodes);
    expect(result).toMatchObject({ message: '0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.' });
  });

  it('adds spec.overhead (set by RuntimeClass admission) to a pod’s requests, its own and bound pods’', () => {
    const withOverhead = (name: string, cpu: string, overhead: string, nodeName?: string): Pod => {
      const p = pod(name, { cpu }, nodeName);
      p.spec.overhead = { cpu: overhead };
      return p;
    };
    const empty = [createNodeInfo(node('node-1', small))];
    expect(schedulePod(profile(), new Map(), withOverhead('p', '600m', '500m'), empty)).toMatchObject({
      message: '0/1 nodes are available: 1 Insufficient cpu.',
    });
    expect(schedulePod(profile(), new Map(), withOverhead('p', '600m', '400m'), empty)).toMatchObject({ nodeName: 'node-1' });
    const busy = [createNodeInfo(node('node-1', small), [withOverhead('a', '300m', '300m', 'node-1')])];
    expect(schedulePod(profile(), new Map(), pod('p', { cpu: '500m' }), busy)).toMatchObject({ code: 'Unschedulable' });
    expect(schedulePod(profile(), new Map(), pod('p', { cpu: '400m' }), busy)).toMatchObject({ nodeName: 'node-1' });
  });

  it('counts what bound pods already requested', () => {
    const full = createNodeInfo(node('node-1', small), [pod('a', { memory: '768Mi' }, 'node-1')]);
    expect(insufficientResources({ milliCPU: 0, memory: 512 * 1024 * 1024, pods: 1 }, full)).toEqual(['Insufficient memory']);
    expect(insufficientResources({ milliCPU: 0, memory: 256 * 1024 * 1024, pods: 1 }, full)).toEqual([]);
  });

  it('says "Too many pods" when the pod count is reached, even for request-less pods', () => {
    const crowded = createNodeInfo(node('node-1', { cpu: '4', memory: '4Gi', pods: 2 }), [pod('a', undefined, 'node-1'), pod('b', undefined, 'node-1')]);
    expect(schedulePod(profile(), new Map(), pod('p'), [crowded])).toMatchObject({ message: '0/1 nodes are available: 1 Too many pods.' });
  });

  it('lets request-less pods onto a node whose cpu and memory are fully requested', () => {
    const busy = createNodeInfo(node('node-1', small), [pod('a', { cpu: '1', memory: '1Gi' }, 'node-1')]);
    expect(schedulePod(profile(), new Map(), pod('p'), [busy])).toMatchObject({ nodeName: 'node-1' });
  });

  it('checks extended resources, unless told to ignore them', () => {
    const gpuNode = createNodeInfo(node('node-1', { ...small, 'example.com/gpu': 1 }));
    const plain = createNodeInfo(node('node-2', small));
    const wantsTwo = pod('p', { 'example.com/gpu': 2 });
    expect(schedulePod(profile(), new Map(), wantsTwo, [gpuNode, plain])).toMatchObject({
      message: '0/2 nodes are available: 2 Insufficient example.com/gpu.',
    });
    expect(schedulePod(profile(), new Map(), pod('q', { 'example.com/gpu': 1 }), [gpuNode, plain])).toMatchObject({ nodeName: 'node-1' });
    const lenient = createResourcesFit({ ignoredResources: ['example.com/gpu'] });
    expect(lenient.filter!(new Map(), wantsTwo, plain)).toBeNull();
  });

  it('sizes a pod by its largest init container when that beats its containers', () => {
    const withInit = pod('p', { cpu: '100m' });
    withInit.spec.initContainers = [{ name: 'migrate', image: 'tool', resources: { requests: { cpu: '1500m' } } }];
    const nodes = [createNodeInfo(node('node-1', small)), createNodeInfo(node('node-2', { cpu: '2', memory: '1Gi', pods: 10 }))];
    expect(schedulePod(profile(), new Map(), withInit, nodes)).toMatchObject({ nodeName: 'node-2' });
    expect(schedulePod(profile(), new Map(), withInit, nodes.slice(0, 1))).toMatchObject({ message: '0/1 nodes are available: 1 Insufficient cpu.' });
  });

  it('computes the requests once per cycle in preFilter', () => {
    const plugin = createResourcesFit();
    const state = new Map<string, unknown>();
    expect(plugin.preFilter!(state, pod('p', { cpu: '1' }), new NodeListSnapshot([]))).toBeNull();
    expect([...state.values()]).toEqual([{ milliCPU: 1000, memory: 0, pods: 1 }]);
  });
  it('ignores whole extended resource groups, never native resources', () => {
    const plain = createNodeInfo(node('node-1', small));
    const wants = pod('p', { 'example.com/gpu': 1, 'example.com/fpga': 1, 'other.io/nic': 1, 'hugepages-2Mi': '2Mi' });
    const byGroup = createResourcesFit({ ignoredResourceGroups: ['example.com'], ignoredResources: ['hugepages-2Mi'] });
    expect(byGroup.filter!(new Map(), wants, plain)).toEqual({ code: 'Unschedulable', reasons: ['Insufficient other.io/nic', 'Insufficient hugepages-2Mi'] });
  });

  it('says "Insufficient ephemeral-storage" after cpu and memory', () => {
    const disk = createNodeInfo(node('node-1', { ...small, 'ephemeral-storage': '10Gi' }));
    const wants = pod('p', { 'example.com/gpu': 1, 'ephemeral-storage': '20Gi', memory: '2Gi' });
    expect(createResourcesFit().filter!(new Map(), wants, disk)).toEqual({
      code: 'Unschedulable',
      reasons: ['Insufficient memory', 'Insufficient ephemeral-storage', 'Insufficient example.com/gpu'],
    });
  });
});
