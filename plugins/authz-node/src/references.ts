import type { Container, Pod } from '@skiff/api';

/** The kinds of object a node may read only through its pods. */
export type ReferencedKind = 'secrets' | 'configmaps' | 'persistentvolumeclaims' | 'serviceaccounts';

/** What one pod uses, by kind: names in the pod's namespace. */
export type PodReferences = Record<ReferencedKind, Set<string>>;

function add(set: Set<string>, name: string | undefined): void {
  if (name) set.add(name);
}

/**
 * Every Secret, ConfigMap, PersistentVolumeClaim and ServiceAccount a pod names: its volumes (projected sources
 * and generic ephemeral volumes included), image pull secrets, environment references and its service account.
 */
export function podReferences(pod: Pod): PodReferences {
  const refs: PodReferences = { secrets: new Set(), configmaps: new Set(), persistentvolumeclaims: new Set(), serviceaccounts: new Set() };
  const spec = pod.spec;
  if (!spec) return refs;
  add(refs.serviceaccounts, spec.serviceAccountName ?? spec.serviceAccount);
  for (const pull of spec.imagePullSecrets ?? []) add(refs.secrets, pull.name);
  for (const volume of spec.volumes ?? []) {
    add(refs.secrets, volume.secret?.secretName);
    add(refs.configmaps, volume.configMap?.name);
    add(refs.persistentvolumeclaims, volume.persistentVolumeClaim?.claimName);
    // A generic ephemeral volume's claim is named after the pod and the volume.
    if (volume.ephemeral) add(refs.persistentvolumeclaims, `${pod.metadata.name}-${volume.name}`);
    for (const source of volume.projected?.sources ?? []) {
      add(refs.secrets, source.secret?.name);
      add(refs.configmaps, source.configMap?.name);
    }
    add(refs.secrets, volume.cephfs?.secretRef?.name);
    add(refs.secrets, volume.rbd?.secretRef?.name);
    add(refs.secrets, volume.iscsi?.secretRef?.name);
    add(refs.secrets, volume.flexVolume?.secretRef?.name);
    add(refs.secrets, volume.csi?.nodePublishSecretRef?.name);
  }
  const containers: Pick<Container, 'env' | 'envFrom'>[] = [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
  for (const container of containers) {
    for (const env of container.env ?? []) {
      add(refs.secrets, env.valueFrom?.secretKeyRef?.name);
      add(refs.configmaps, env.valueFrom?.configMapKeyRef?.name);
    }
    for (const from of container.envFrom ?? []) {
      add(refs.secrets, from.secretRef?.name);
      add(refs.configmaps, from.configMapRef?.name);
    }
  }
  return refs;
}
