import { isPodAvailable, isPodReady, isPodTerminal, type DaemonSet, type Node, type Pod } from '@skiff/api';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import { CONTROLLER_REVISION_HASH_LABEL } from './names.js';
import { targetNodeName } from './node-affinity.js';
import { compareScheduledThenOldest } from './pods.js';
import { allowsSurge } from './rolling.js';

/** What one pass of the controller does to bring each node to one daemon pod. */
export interface ManagePlan {
  /** Nodes that should run a daemon pod and have none: create one on each. */
  nodesNeedingPods: string[];
  /** Pods to delete: on nodes that no longer want them, on nodes that are gone, and extras beyond one per node. */
  podsToDelete: Pod[];
  /** Failed (or finished) daemon pods, by node: the controller deletes them unless that node is backing off. */
  failedPods: { nodeName: string; pod: Pod }[];
}

/**
 * The DaemonSet's pods by the node they belong to (see targetNodeName); pods naming no node are left out.
 * `includeDeletedTerminal: false` also leaves out pods that have finished and are being deleted.
 */
export function podsByNode(pods: readonly Pod[], includeDeletedTerminal = true): Map<string, Pod[]> {
  const byNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    if (!includeDeletedTerminal && isPodTerminal(pod) && pod.metadata.deletionTimestamp) continue;
    const nodeName = targetNodeName(pod.spec);
    if (!nodeName) continue;
    const list = byNode.get(nodeName);
    if (list) list.push(pod);
    else byNode.set(nodeName, [pod]);
  }
  return byNode;
}

/**
 * Compares every node with the daemon pods it has. A node that should run the pod and has none gets one;
 * a node that may no longer keep it loses its pods; a node with several live pods keeps the oldest (with
 * surge: the oldest of the current revision, plus the oldest old one until the new one is available).
 * Pods naming a node that does not exist are deleted too.
 */
export function planDaemonPods(ds: DaemonSet, nodes: readonly Node[], byNode: ReadonlyMap<string, readonly Pod[]>, hash: string, now: number): ManagePlan {
  const plan: ManagePlan = { nodesNeedingPods: [], podsToDelete: [], failedPods: [] };
  const surge = allowsSurge(ds);
  const minReadySeconds = ds.spec.minReadySeconds ?? 0;
  for (const node of nodes) {
    const nodeName = node.metadata.name!;
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
    const pods = byNode.get(nodeName);
    if (shouldRun && !pods) {
      plan.nodesNeedingPods.push(nodeName);
      continue;
    }
    if (!pods) continue;
    if (!shouldContinueRunning) {
      plan.podsToDelete.push(...pods.filter((pod) => !pod.metadata.deletionTimestamp));
      continue;
    }
    const running: Pod[] = [];
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp) continue;
      if (isPodTerminal(pod)) plan.failedPods.push({ nodeName, pod });
      else running.push(pod);
    }
    running.sort(compareScheduledThenOldest);
    if (!surge) {
      plan.podsToDelete.push(...running.slice(1));
      continue;
    }
    if (running.length === 0) {
      if (shouldRun) plan.nodesNeedingPods.push(nodeName);
      continue;
    }
    let oldestNew: Pod | undefined;
    let oldestOld: Pod | undefined;
    for (const pod of running) {
      const isNew = pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash;
      if (isNew && !oldestNew) oldestNew = pod;
      else if (!isNew && !oldestOld) oldestOld = pod;
      else plan.podsToDelete.push(pod);
    }
    // Two pods may share a node only while the new one is not yet available and the old one still serves.
    if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isPodAvailable(oldestNew, minReadySeconds, now))) plan.podsToDelete.push(oldestOld);
  }
  const known = new Set(nodes.map((node) => node.metadata.name));
  for (const [nodeName, pods] of byNode) {
    if (!known.has(nodeName)) plan.podsToDelete.push(...pods.filter((pod) => !pod.metadata.deletionTimestamp));
  }
  return plan;
}
