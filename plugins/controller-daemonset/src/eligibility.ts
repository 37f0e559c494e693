import { podFitsNodeAffinity, type DaemonSet, type Node } from '@skiff/api';
import { untoleratedTaints, withDaemonTolerations } from './tolerations.js';

export interface NodeVerdict {
  /** A daemon pod should be created on the node if it has none. */
  shouldRun: boolean;
  /** A daemon pod already on the node may stay. */
  shouldContinueRunning: boolean;
}

const NEITHER: NodeVerdict = Object.freeze({ shouldRun: false, shouldContinueRunning: false });

/**
 * Whether a DaemonSet wants a pod on a node, as upstream's controller decides it: the template's node name
 * (if set), node selector and required node affinity must match the node, and the pod (with the DaemonSet
 * default tolerations) must tolerate its NoSchedule and NoExecute taints. A pod already there may stay
 * unless a NoExecute taint is untolerated.
 */
export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): NodeVerdict {
  const spec = ds.spec.template.spec;
  if (spec.nodeName && spec.nodeName !== node.metadata.name) return NEITHER;
  if (!podFitsNodeAffinity(spec, node)) return NEITHER;
  const tolerations = withDaemonTolerations(spec);
  const untolerated = untoleratedTaints(node, tolerations, ['NoSchedule', 'NoExecute']);
  if (untolerated.length === 0) return { shouldRun: true, shouldContinueRunning: true };
  return { shouldRun: false, shouldContinueRunning: !untolerated.some((taint) => taint.effect === 'NoExecute') };
}
