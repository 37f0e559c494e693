import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '@skiff/api';
import type { NodeInfo } from '@skiff/kernel';
import { buildProfile, createNodeInfo, NodeListSnapshot, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { createImageLocality, imageLocalityPriority, MAX_CONTAINER_THRESHOLD, MIN_THRESHOLD } from './image-locality.js';

const MB = 1024 * 1024;

function node(name: string, images: [string[], number][] = []): Node {
  return {
    metadata: { name },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: 110 },
      conditions: [{ type: 'Ready', status: 'True' }],
      images: images.map(([names, sizeBytes]) => ({ names, sizeBytes })),
    },
  };
}

function pod(name: string, ...images: string[]): Pod {
  return { metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) } };
}

function scores(incoming: Pod, nodes: NodeInfo[]): Record<string, number> {
  const plugin = createImageLocality();
  const state = new Map<string, unknown>();
  expect(plugin.preScore!(state, incoming, nodes, new NodeListSnapshot(nodes))).toBeNull();
  return Object.fromEntries(nodes.map((info) => [info.node.metadata.name!, plugin.score!(state, incoming, info)]));
}

describe('ImageLocality', () => {
  it("scores the images present by size × spread (upstream's case: three large images, three nodes)", () => {
    const nodes = [
      node('node-1', [
        [['gcr.io/600:latest'], 600 * MB],
        [['gcr.io/900:latest'], 900 * MB],
      ]),
      node('node-2', [
        [['gcr.io/300:latest'], 300 * MB],
        [['gcr.io/600:latest'], 600 * MB],
        [['gcr.io/900:latest'], 900 * MB],
      ]),
      node('node-3'),
    ].map((n) => createNodeInfo(n));
    // node-1: 100 × (600M × 2/3 + 900M × 2/3 − 23M) / (3 × 1000M − 23M) = 32; node-2 adds 300M × 1/3 → 36
    expect(scores(pod('p', 'gcr.io/300', 'gcr.io/600', 'gcr.io/900'), nodes)).toEqual({ 'node-1': 32, 'node-2': 36, 'node-3': 0 });
  });

  it('clamps the sum to [23MB, 1000MB × containers]', () => {
    expect(imageLocalityPriority(0, 1)).toBe(0);
    expect(imageLocalityPriority(MIN_THRESHOLD, 2)).toBe(0);
    expect(imageLocalityPriority(5 * MAX_CONTAINER_THRESHOLD, 2)).toBe(100);
    const nodes = [node('big', [[['gcr.io/4000:latest'], 4000 * MB]]), node('small', [[['gcr.io/10:latest'], 10 * MB]]), node('none')].map((n) =>
      createNodeInfo(n),
    );
    // big: 100 × (4000M / 3 − 23M) / (2000M − 23M) = 66; small: 10M / 3 is under the minimum → 0
    expect(scores(pod('p', 'gcr.io/4000', 'gcr.io/10'), nodes)).toEqual({ big: 66, small: 0, none: 0 });
  });

  it('matches image names normalized (docker.io/library/ and an implicit :latest)', () => {
    const nodes = [node('node-1', [[['docker.io/library/nginx:latest', 'nginx@sha256:abc'], 500 * MB]]), node('node-2')].map((n) => createNodeInfo(n));
    // 500M × 1/2 = 250M: 100 × (250M − 23M) / (1000M − 23M) = 23
    expect(scores(pod('p', 'nginx'), nodes)).toEqual({ 'node-1': 23, 'node-2': 0 });
    expect(scores(pod('q', 'library/nginx:latest'), nodes)).toEqual({ 'node-1': 23, 'node-2': 0 });
  });

  it('places a pod on the node that already has its image', () => {
    const registry = new PluginRegistry();
    registry.register(createImageLocality());
    const profile = buildProfile(registry);
    expect(profile.score).toEqual([{ plugin: expect.objectContaining({ name: 'ImageLocality' }), weight: 1 }]);
    const nodes = [node('cold'), node('warm', [[['registry.example.com/app:v2'], 800 * MB]]), node('stale', [[['registry.example.com/app:v1'], 800 * MB]])].map(
      (n) => createNodeInfo(n),
    );
    expect(schedulePod(profile, new Map(), pod('p', 'registry.example.com/app:v2'), nodes)).toMatchObject({ nodeName: 'warm' });
  });

  it('scores without preScore from the snapshot its handle gives, and says so when it has neither', () => {
    const nodes = [node('node-1', [[['gcr.io/600:latest'], 600 * MB]])].map((n) => createNodeInfo(n));
    const plugin = createImageLocality();
    expect(() => plugin.score!(new Map(), pod('p', 'gcr.io/600'), nodes[0]!)).toThrow('no snapshot');
    void plugin.init!({ snapshot: () => new NodeListSnapshot(nodes) } as never);
    // 600M × 1/1: 100 × (600M − 23M) / (1000M − 23M) = 59
    expect(plugin.score!(new Map(), pod('p', 'gcr.io/600'), nodes[0]!)).toBe(59);
  });
});
