import { isPodAvailable, isPodReady, type DaemonSet, type DaemonSetStatus, type Node, type Pod } from '@skiff/api';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import { isPodUpdated, templateGeneration } from './pod-template.js';
import { compareScheduledThenOldest } from './pods.js';

/**
 * The counts a DaemonSet reports, node by node: desired (nodes that should run the pod), current (of
 * those, nodes that have one), misscheduled (nodes that have one but should not), and — judged by the
 * oldest pod on each desired node — ready, available (ready for minReadySeconds) and updated (made from
 * the current revision). `observedGeneration` is set when `observed` says this pass acted on the spec.
 */
export function calculateStatus(
  ds: DaemonSet,
  nodes: readonly Node[],
  byNode: ReadonlyMap<string, readonly Pod[]>,
  hash: string,
  now: number,
  observed: boolean,
): DaemonSetStatus {
  const generation = templateGeneration(ds);
  const minReadySeconds = ds.spec.minReadySeconds ?? 0;
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of nodes) {
    const pods = byNode.get(node.metadata.name!) ?? [];
    const scheduled = pods.length > 0;
    if (!nodeShouldRunDaemonPod(node, ds).shouldRun) {
      if (scheduled) misscheduled += 1;
      continue;
    }
    desired += 1;
    if (!scheduled) continue;
    current += 1;
    const pod = [...pods].sort(compareScheduledThenOldest)[0]!;
    if (isPodReady(pod)) {
      ready += 1;
      if (isPodAvailable(pod, minReadySeconds, now)) available += 1;
    }
    if (isPodUpdated(pod, hash, generation)) updated += 1;
  }
  const status: DaemonSetStatus = {
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: desired,
    numberReady: ready,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberUnavailable: desired - available,
  };
  const observedGeneration = observed ? ds.metadata.generation : ds.status?.observedGeneration;
  if (observedGeneration !== undefined) status.observedGeneration = observedGeneration;
  if (ds.status?.collisionCount !== undefined) status.collisionCount = ds.status.collisionCount;
  if (ds.status?.conditions) status.conditions = ds.status.conditions;
  return status;
}

const COUNTS = [
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
  'observedGeneration',
] as const;

/** Whether writing `status` would change what the DaemonSet reports. */
export function statusChanged(ds: DaemonSet, status: DaemonSetStatus): boolean {
  const current = ds.status;
  if (!current) return true;
  return COUNTS.some((field) => (current[field] ?? 0) !== (status[field] ?? 0));
}
