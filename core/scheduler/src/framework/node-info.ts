import type { Node, Pod } from '@skiff/api';
import type { NodeInfo } from '@skiff/kernel';
import { addAmounts, amountsFromResourceList, emptyAmounts, podRequests } from './resources.js';

function samePod(a: Pod, b: Pod): boolean {
  if (a.metadata.uid && b.metadata.uid) return a.metadata.uid === b.metadata.uid;
  return a.metadata.name === b.metadata.name && a.metadata.namespace === b.metadata.namespace;
}

/** The pod has a pod affinity or anti-affinity term of any kind. */
export function hasPodAffinityTerms(pod: Pod): boolean {
  const affinity = pod.spec.affinity;
  return !!(affinity?.podAffinity || affinity?.podAntiAffinity);
}

/** The pod has a required pod anti-affinity term. */
export function hasRequiredAntiAffinity(pod: Pod): boolean {
  return (pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0;
}

/** A NodeInfo for `node` holding `pods`: allocatable from status.allocatable (or capacity), requests summed. */
export function createNodeInfo(node: Node, pods: Pod[] = []): NodeInfo {
  const info: NodeInfo = {
    node,
    pods: [],
    requested: emptyAmounts(),
    nonZeroRequested: emptyAmounts(),
    allocatable: amountsFromResourceList(node.status?.allocatable ?? node.status?.capacity),
    podsWithAffinity: [],
    podsWithRequiredAntiAffinity: [],
    generation: 0,
  };
  for (const pod of pods) addPodToNodeInfo(info, pod);
  return info;
}

export function setNodeInfoNode(info: NodeInfo, node: Node): void {
  info.node = node;
  info.allocatable = amountsFromResourceList(node.status?.allocatable ?? node.status?.capacity);
  info.generation = (info.generation ?? 0) + 1;
}

export function addPodToNodeInfo(info: NodeInfo, pod: Pod): void {
  info.pods.push(pod);
  addAmounts(info.requested, podRequests(pod));
  addAmounts((info.nonZeroRequested ??= emptyAmounts()), podRequests(pod, { nonZeroDefaults: true }));
  if (hasPodAffinityTerms(pod)) (info.podsWithAffinity ??= []).push(pod);
  if (hasRequiredAntiAffinity(pod)) (info.podsWithRequiredAntiAffinity ??= []).push(pod);
  info.generation = (info.generation ?? 0) + 1;
}

function removeFrom(list: Pod[] | undefined, pod: Pod): void {
  if (!list) return;
  const index = list.findIndex((held) => samePod(held, pod));
  if (index >= 0) list.splice(index, 1);
}

/** Removes the pod with the same uid (or namespace/name); returns whether it was there. */
export function removePodFromNodeInfo(info: NodeInfo, pod: Pod): boolean {
  const index = info.pods.findIndex((held) => samePod(held, pod));
  if (index < 0) return false;
  const [held] = info.pods.splice(index, 1) as [Pod];
  addAmounts(info.requested, podRequests(held), -1);
  addAmounts((info.nonZeroRequested ??= emptyAmounts()), podRequests(held, { nonZeroDefaults: true }), -1);
  removeFrom(info.podsWithAffinity, held);
  removeFrom(info.podsWithRequiredAntiAffinity, held);
  info.generation = (info.generation ?? 0) + 1;
  return true;
}

/** An independent copy for a what-if (preemption): the lists and amounts are copied, the objects shared. */
export function cloneNodeInfo(info: NodeInfo): NodeInfo {
  return {
    node: info.node,
    pods: [...info.pods],
    requested: structuredClone(info.requested),
    nonZeroRequested: structuredClone(info.nonZeroRequested ?? emptyAmounts()),
    allocatable: info.allocatable,
    podsWithAffinity: [...(info.podsWithAffinity ?? [])],
    podsWithRequiredAntiAffinity: [...(info.podsWithRequiredAntiAffinity ?? [])],
    generation: info.generation ?? 0,
  };
}
