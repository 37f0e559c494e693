import type { DaemonSet, OwnerReference, Pod } from '@skiff/api';
import { CONTROLLER_REVISION_HASH_LABEL, TEMPLATE_GENERATION_ANNOTATION, TEMPLATE_GENERATION_LABEL } from './names.js';
import { affinityForNode } from './node-affinity.js';
import { withDaemonTolerations } from './tolerations.js';

/**
 * The DaemonSet's template generation: the annotation the API server keeps for the older API when it
 * writes one, otherwise `metadata.generation` (which moves with every template change too).
 */
export function templateGeneration(ds: DaemonSet): number | undefined {
  const annotated = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  if (annotated !== undefined && /^\d+$/.test(annotated)) return Number(annotated);
  return ds.metadata.generation;
}

/** Whether a pod was made from the DaemonSet's current template: same revision hash, or same template generation. */
export function isPodUpdated(pod: Pod, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  if (hash && labels[CONTROLLER_REVISION_HASH_LABEL] === hash) return true;
  return generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === String(generation);
}

/**
 * A new daemon pod for one node: the template with the revision labels, the DaemonSet default
 * tolerations and a required node affinity naming the node, owned by the DaemonSet. It is left to the
 * scheduler to bind; the API server completes the name from `generateName`.
 */
export function podForNode(ds: DaemonSet, nodeName: string, hash: string, controllerRef: OwnerReference): Pod {
  const template = ds.spec.template;
  const labels: Record<string, string> = { ...{}, ...template.metadata?.labels, [CONTROLLER_REVISION_HASH_LABEL]: hash };
  const generation = templateGeneration(ds);
  if (generation !== undefined) labels[TEMPLATE_GENERATION_LABEL] = String(generation);
  const metadata: Pod['metadata'] = { generateName: `${ds.metadata.name}-`, namespace: ds.metadata.namespace, labels, ownerReferences: [controllerRef] };
  if (template.metadata?.annotations) metadata.annotations = structuredClone(template.metadata.annotations);
  if (template.metadata?.finalizers) metadata.finalizers = structuredClone(template.metadata.finalizers);
  const spec = structuredClone(template.spec);
  spec.tolerations = withDaemonTolerations(template.spec);
  spec.affinity = affinityForNode(template.spec.affinity, nodeName);
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}
