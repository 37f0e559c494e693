import type { Deployment, OwnerReference, PodTemplateSpec, ReplicaSet } from '@skiff/api';
import { canonicalJson } from '@skiff/controller-manager';
import { POD_TEMPLATE_HASH_LABEL } from './names.js';
import { byCreationOldestFirst } from './replicasets.js';

function withoutHashLabel(template: PodTemplateSpec | undefined): unknown {
  if (!template) return undefined;
  const labels = { ...template.metadata?.labels };
  delete labels[POD_TEMPLATE_HASH_LABEL];
  return { ...{}, ...template, metadata: { ...{}, ...template.metadata, labels } };
}

/** Whether two pod templates are the same apart from the pod-template-hash label. */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return canonicalJson(withoutHashLabel(a)) === canonicalJson(withoutHashLabel(b));
}

/** The ReplicaSet running the Deployment's current template (the oldest, should there be several). */
export function findNewReplicaSet(d: Deployment, replicaSets: readonly ReplicaSet[]): ReplicaSet | undefined {
  return [...replicaSets].sort(byCreationOldestFirst).find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

/**
 * The ReplicaSet a Deployment creates for its current template, still without replicas and
 * annotations: named `<deployment>-<hash>`, with the hash label added to its labels, selector and
 * pod template so its pods are told apart from those of the Deployment's other ReplicaSets.
 */
export function buildNewReplicaSet(d: Deployment, hash: string, controllerRef: OwnerReference): ReplicaSet {
  const template = structuredClone(d.spec.template);
  const labels = { ...{}, ...template.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash };
  template.metadata = { ...{}, ...template.metadata, labels };
  const selector = structuredClone(d.spec.selector);
  selector.matchLabels = { ...{}, ...selector.matchLabels, [POD_TEMPLATE_HASH_LABEL]: hash };
  const spec: ReplicaSet['spec'] = { replicas: 0, selector, template };
  if (d.spec.minReadySeconds !== undefined) spec.minReadySeconds = d.spec.minReadySeconds;
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: d.metadata.namespace,
      labels: { ...labels },
      ownerReferences: [controllerRef],
    },
    spec,
  };
}
