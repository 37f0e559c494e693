import type { Node, Pod, Taint, TopologySpreadConstraint } from '@skiff/api';
import type { CycleState, NodeInfo } from '@skiff/kernel';
import { createNodeInfo, NodeListSnapshot } from '@skiff/scheduler';

/** A Ready node in `zone` (none when undefined), labelled with its hostname unless `hostname` is false. */
export function zoneNode(name: string, zone: string | undefined, extra: { taints?: Taint[]; hostname?: boolean; labels?: Record<string, string> } = {}): Node {
  const labels: Record<string, string> = { ...extra.labels };
  if (extra.hostname !== false) labels['kubernetes.io/hostname'] = name;
  if (zone !== undefined) labels['topology.kubernetes.io/zone'] = zone;
  return {
    metadata: { name, uid: `uid-${name}`, labels },
    spec: extra.taints ? { taints: extra.taints } : {},
    status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

export function labelledPod(name: string, labels: Record<string, string>, spec: Partial<Pod['spec']> = {}, namespace = 'default'): Pod {
  return { metadata: { name, namespace, uid: `uid-${name}`, labels }, spec: { containers: [{ name: 'main', image: 'nginx' }], ...spec } };
}

/** `count` pods labelled app=web bound to each node's info. */
export function withWebPods(node: Node, count: number, labels: Record<string, string> = { app: 'web' }): NodeInfo {
  const pods = Array.from({ length: count }, (_, i) => labelledPod(`${node.metadata.name}-web-${i}`, labels, { nodeName: node.metadata.name }));
  return createNodeInfo(node, pods);
}

export const zoneSpread = (maxSkew: number, extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew,
  topologyKey: 'topology.kubernetes.io/zone',
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: { matchLabels: { app: 'web' } },
  ...extra,
});

export const snapshotOf = (nodes: NodeInfo[]) => new NodeListSnapshot(nodes);

export const newState = (): CycleState => new Map();
