import type { OwnerReference, Pod, ReplicaSet } from '@skiff/api';

/**
 * A new pod for a ReplicaSet: the template's labels, annotations, finalizers and spec, owned by the
 * ReplicaSet; the API server completes the name from `generateName` (`<rs>-<5 random characters>`).
 */
export function podFromTemplate(rs: ReplicaSet, controllerRef: OwnerReference): Pod {
  const template = rs.spec.template;
  const metadata: Pod['metadata'] = {
    generateName: `${rs.metadata.name}-`,
    namespace: rs.metadata.namespace,
    ownerReferences: [controllerRef],
  };
  if (template.metadata?.labels) metadata.labels = structuredClone(template.metadata.labels);
  if (template.metadata?.annotations) metadata.annotations = structuredClone(template.metadata.annotations);
  if (template.metadata?.finalizers) metadata.finalizers = structuredClone(template.metadata.finalizers);
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredClone(template.spec) };
}
