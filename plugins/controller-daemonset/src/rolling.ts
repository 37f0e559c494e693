import { isPodAvailable, type DaemonSet, type Node, type Pod } from '@skiff/api';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import { scaledCount } from './int-or-percent.js';
import { isPodUpdated, templateGeneration } from './pod-template.js';

export function isRollingUpdate(ds: DaemonSet): boolean {
  return (ds.spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** Whether a rolling update starts the new pod on a node before removing the old one (maxSurge above 0). */
export function allowsSurge(ds: DaemonSet): boolean {
  if (!isRollingUpdate(ds)) return false;
  const surge = ds.spec.updateStrategy?.rollingUpdate?.maxSurge;
  if (surge === undefined) return false;
  try {
    return scaledCount(surge, 100, 'spec.updateStrategy.rollingUpdate.maxSurge', 0) > 0;
  } catch {
    return false;
  }
}

/**
 * maxSurge and maxUnavailable as node counts for `desired` nodes (percentages round up). Both zero would
 * leave the update stuck, so unavailable is then 1.
 */
export function rollingLimits(ds: DaemonSet, desired: number): { maxSurge: number; maxUnavailable: number } {
  const params = ds.spec.updateStrategy?.rollingUpdate ?? {};
  const maxUnavailable = scaledCount(params.maxUnavailable, desired, 'spec.updateStrategy.rollingUpdate.maxUnavailable', 1);
  const maxSurge = scaledCount(params.maxSurge, desired, 'spec.updateStrategy.rollingUpdate.maxSurge', 0);
  if (desired > 0 && maxSurge === 0 && maxUnavailable === 0) return { maxSurge, maxUnavailable: 1 };
  return { maxSurge, maxUnavailable };
}

/** The step a rolling update takes in one pass: old pods to delete, nodes to start a new pod on (surge). */
export interface RollingStep {
  podsToDelete: Pod[];
  nodesToCreate: string[];
}

/** The live new and old pod on a node, or undefined when there are more than one of either (the manage pass cleans that up). */
function podsOnNode(pods: readonly Pod[], hash: string, generation: number | undefined): { newPod?: Pod; oldPod?: Pod } | undefined {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (isPodUpdated(pod, hash, generation)) {
      if (newPod) return undefined;
      newPod = pod;
    } else {
      if (oldPod) return undefined;
      oldPod = pod;
    }
  }
  return { newPod, oldPod };
}

/**
 * One pass of a RollingUpdate, as upstream's controller takes it. Without surge: old pods are deleted
 * (their replacements come from the next manage pass) while fewer than maxUnavailable nodes lack an
 * available current pod; old pods that are not available anyway go first and at no cost. With surge: a
 * new pod starts beside the old one on up to maxSurge nodes at a time, and the old one is deleted once
 * the new one is available.
 */
export function planRollingUpdate(ds: DaemonSet, nodes: readonly Node[], byNode: ReadonlyMap<string, readonly Pod[]>, hash: string, now: number): RollingStep {
  const all = new Map<string, readonly Pod[]>(byNode);
  let desired = 0;
  for (const node of nodes) {
    if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
    desired += 1;
    if (!all.has(node.metadata.name!)) all.set(node.metadata.name!, []);
  }
  const { maxSurge, maxUnavailable } = rollingLimits(ds, desired);
  const generation = templateGeneration(ds);
  const minReadySeconds = ds.spec.minReadySeconds ?? 0;
  const nodeNames = [...all.keys()].sort();
  const step: RollingStep = { podsToDelete: [], nodesToCreate: [] };

  if (maxSurge === 0) {
    let unavailable = 0;
    const candidates: Pod[] = [];
    for (const nodeName of nodeNames) {
      const found = podsOnNode(all.get(nodeName)!, hash, generation);
      if (!found || Boolean(found.newPod) === Boolean(found.oldPod)) {
        unavailable += 1;
      } else if (found.newPod) {
        if (!isPodAvailable(found.newPod, minReadySeconds, now)) unavailable += 1;
      } else if (!isPodAvailable(found.oldPod!, minReadySeconds, now)) {
        step.podsToDelete.push(found.oldPod!);
      } else if (unavailable < maxUnavailable) {
        candidates.push(found.oldPod!);
      }
    }
    const room = Math.min(Math.max(maxUnavailable - unavailable, 0), candidates.length);
    step.podsToDelete.push(...candidates.slice(0, room));
    return step;
  }

  const nodesByName = new Map(nodes.map((node) => [node.metadata.name!, node]));
  let surging = 0;
  const candidates: string[] = [];
  for (const nodeName of nodeNames) {
    const found = podsOnNode(all.get(nodeName)!, hash, generation);
    if (!found) {
      surging += 1;
      continue;
    }
    const { newPod, oldPod } = found;
    if (!oldPod) continue;
    if (!newPod) {
      if (!isPodAvailable(oldPod, minReadySeconds, now)) {
        const node = nodesByName.get(nodeName);
        // An unavailable old pod on a node that no longer wants one just goes; elsewhere it is replaced at no cost.
        if (!node || !nodeShouldRunDaemonPod(node, ds).shouldRun) step.podsToDelete.push(oldPod);
        else step.nodesToCreate.push(nodeName);
      } else if (surging < maxSurge) {
        candidates.push(nodeName);
      }
      continue;
    }
    if (!isPodAvailable(newPod, minReadySeconds, now)) surging += 1;
    else step.podsToDelete.push(oldPod);
  }
  const room = Math.min(Math.max(maxSurge - surging, 0), candidates.length);
  step.nodesToCreate.push(...candidates.slice(0, room));
  return step;
}
