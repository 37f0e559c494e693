import type { Container, Node, Pod } from '@skiff/api';

/** A Ready node with the given allocatable resources. */
export function makeNode(name: string, allocatable: Record<string, string | number> = { cpu: '4', memory: '8Gi', pods: 110 }, extra: Partial<Node> = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, uid: `uid-${name}` },
    spec: {},
    status: { allocatable, capacity: allocatable, conditions: [{ type: 'Ready', status: 'True' }] },
    ...extra,
  };
}

export function makeContainer(name: string, requests?: Record<string, string | number>, extra: Partial<Container> = {}): Container {
  return { name, image: 'nginx', ...(requests ? { resources: { requests } } : {}), ...extra };
}

/** A pending pod; `requests` go on its one container. */
export function makePod(name: string, requests?: Record<string, string | number>, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { containers: [makeContainer('main', requests)], ...extra },
  };
}

/** A deterministic random source (mulberry32) for tie-breaking tests. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
