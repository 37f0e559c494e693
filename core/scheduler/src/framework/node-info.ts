import type { Node, Pod } from '@skiff/api';
import type { NodeInfo } from '@skiff/kernel';
import { addAmounts, amountsFromResourceList, emptyAmounts, podRequests } from './resources.js';

function samePod(a: Pod, b: Pod): boolean {
  if (a.metadata.uid && b.metadata.uid) return a.metadata.uid === b.metadata.uid;
  return a.metadata.name === b.metadata.name && a.metadata.namespace === b.metadata.namespace;
}

/** A NodeInfo for `node` holding `pods`: allocatable from status.allocatable (or capacity), requests summed. */
export function createNodeInfo(node: Node, pods: Pod[] = []): NodeInfo {
  const info: NodeInfo = {
    node,
    pods: [],
    requested: emptyAmounts(),
    nonZeroRequested: emptyAmounts(),
    allocatable: amountsFromResourceList(node.status?.allocatable ?? node.status?.capacity),
  };
  for (const pod of pods) addPodToNodeInfo(info, pod);
  return info;
}

export function setNodeInfoNode(info: NodeInfo, node: Node): void {
  info.node = node;
  info.allocatable = amountsFromResourceList(node.status?.allocatable ?? node.status?.capacity);
}

export function addPodToNodeInfo(info: NodeInfo, pod: Pod): void {
  info.pods.push(pod);
  addAmounts(info.requested, podRequests(pod));
  addAmounts((info.nonZeroRequested ??= emptyAmounts()), podRequests(pod, { nonZeroDefaults: true }));
}

/** Removes the pod with the same uid (or namespace/name); returns whether it was there. */
export function removePodFromNodeInfo(info: NodeInfo, pod: Pod): boolean {
  const index = info.pods.findIndex((held) => samePod(held, pod));
  if (index < 0) return false;
  const [held] = info.pods.splice(index, 1) as [Pod];
  addAmounts(info.requested, podRequests(held), -1);
  addAmounts((info.nonZeroRequested ??= emptyAmounts()), podRequests(held, { nonZeroDefaults: true }), -1);
  return true;
}
