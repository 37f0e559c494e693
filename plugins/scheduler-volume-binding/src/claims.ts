import { labelSelectorFromObject, parseBytes, type PersistentVolume, type PersistentVolumeClaim, type Pod, type StorageClass } from '@skiff/api';
import { volumeFitsNode } from './node-affinity.js';
import { ANNOTATION } from './names.js';

type Labels = Readonly<Record<string, string>> | undefined;

const FILESYSTEM = 'Filesystem';

/** A pod volume backed by a claim: by name, or a generic ephemeral volume's claim (`<pod>-<volume>`). */
export interface PodClaimRef {
  claimName: string;
  ephemeral: boolean;
}

export function podClaimRefs(pod: Pod): PodClaimRef[] {
  const refs: PodClaimRef[] = [];
  for (const volume of pod.spec.volumes ?? []) {
    if (volume.persistentVolumeClaim) refs.push({ claimName: volume.persistentVolumeClaim.claimName, ephemeral: false });
    else if (volume.ephemeral) refs.push({ claimName: `${pod.metadata.name}-${volume.name}`, ephemeral: true });
  }
  return refs;
}

export function claimKey(claim: { metadata: { namespace?: string; name?: string } }): string {
  return `${claim.metadata.namespace}/${claim.metadata.name}`;
}

/** The class a claim asks for (the beta annotation first, as upstream reads it); `""` means none. */
export function claimClass(claim: PersistentVolumeClaim): string {
  return claim.metadata.annotations?.[ANNOTATION.BETA_STORAGE_CLASS] ?? claim.spec?.storageClassName ?? '';
}

export function volumeClass(volume: PersistentVolume): string {
  return volume.metadata.annotations?.[ANNOTATION.BETA_STORAGE_CLASS] ?? volume.spec.storageClassName ?? '';
}

/** Bound as far as the scheduler cares: it names its volume and the PV controller finished the bind. */
export function isClaimFullyBound(claim: PersistentVolumeClaim): boolean {
  return !!claim.spec?.volumeName && claim.metadata.annotations?.[ANNOTATION.BIND_COMPLETED] !== undefined;
}

/** Whether the claim's class binds late (WaitForFirstConsumer). No class, or an unknown one, binds at once. */
export function isDelayBinding(claim: PersistentVolumeClaim, classOf: (name: string) => StorageClass | undefined): boolean {
  const name = claimClass(claim);
  if (!name) return false;
  return classOf(name)?.volumeBindingMode === 'WaitForFirstConsumer';
}

/** Whether the claim was made for this pod (a generic ephemeral volume's claim is controlled by its pod). */
export function isClaimOfPod(claim: PersistentVolumeClaim, pod: Pod): boolean {
  return (claim.metadata.ownerReferences ?? []).some((owner) => owner.controller === true && owner.uid === pod.metadata.uid);
}

export function requestedBytes(claim: PersistentVolumeClaim): number {
  const request = claim.spec?.resources?.requests?.storage;
  return request === undefined ? 0 : parseBytes(request);
}

export function capacityBytes(volume: PersistentVolume): number {
  const capacity = volume.spec.capacity?.storage;
  return capacity === undefined ? 0 : parseBytes(capacity);
}

/** Whether the volume's claimRef names this claim (by uid too when the claimRef has one). */
export function isVolumeBoundToClaim(volume: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = volume.spec.claimRef;
  if (!ref || ref.name !== claim.metadata.name || ref.namespace !== claim.metadata.namespace) return false;
  return !ref.uid || ref.uid === claim.metadata.uid;
}

function offersAccessModes(volume: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const offered = new Set(volume.spec.accessModes ?? []);
  return (claim.spec?.accessModes ?? []).every((mode) => offered.has(mode));
}

/**
 * The volume a delayed-binding claim would get on a node with these labels, as the scheduler chooses it: a
 * volume pre-bound to the claim if it fits the node (if it does not, nothing), else the smallest Available
 * volume of the claim's class and volume mode, big enough, offering its access modes, matching its selector,
 * usable from the node, and not already chosen for another claim of the pod (ties by name).
 */
export function findMatchingVolume(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  nodeLabels: Labels,
  excluded: ReadonlySet<string>,
): PersistentVolume | undefined {
  const requested = requestedBytes(claim);
  const mode = claim.spec?.volumeMode ?? FILESYSTEM;
  const className = claimClass(claim);
  const selector = claim.spec?.selector ? labelSelectorFromObject(claim.spec.selector) : undefined;
  let best: PersistentVolume | undefined;
  for (const volume of volumes) {
    if (excluded.has(volume.metadata.name!)) continue;
    const prebound = isVolumeBoundToClaim(volume, claim);
    if (volume.spec.claimRef && !prebound) continue;
    if (capacityBytes(volume) < requested) continue;
    if ((volume.spec.volumeMode ?? FILESYSTEM) !== mode) continue;
    if (volume.metadata.deletionTimestamp) continue;
    const fits = volumeFitsNode(volume, nodeLabels);
    if (prebound) return fits ? volume : undefined;
    if (volume.status?.phase !== 'Available') continue;
    if (selector && !selector.matches(volume.metadata.labels)) continue;
    if (volumeClass(volume) !== className || !fits || !offersAccessModes(volume, claim)) continue;
    const smaller = best && (capacityBytes(volume) - capacityBytes(best) || volume.metadata.name!.localeCompare(best.metadata.name!));
    if (!best || smaller! < 0) best = volume;
  }
  return best;
}

/**
 * A copy of the volume bound to the claim as the PV controller would write it (claimRef with the claim's
 * uid; `bound-by-controller` unless the volume was pre-bound to it by hand), and whether anything changed.
 */
export function volumeBoundToClaim(volume: PersistentVolume, claim: PersistentVolumeClaim): { volume: PersistentVolume; changed: boolean } {
  const ref = volume.spec.claimRef;
  const markByController = !isVolumeBoundToClaim(volume, claim) && volume.metadata.annotations?.[ANNOTATION.BOUND_BY_CONTROLLER] === undefined;
  const sameClaim = ref?.name === claim.metadata.name && ref?.namespace === claim.metadata.namespace && ref?.uid === claim.metadata.uid;
  if (sameClaim && !markByController) return { volume, changed: false };
  return {
    volume: {
      ...{},
      ...volume,
      metadata: {
        ...{},
        ...volume.metadata,
        ...(markByController ? { annotations: { ...{}, ...volume.metadata.annotations, [ANNOTATION.BOUND_BY_CONTROLLER]: 'yes' } } : {}),
      },
      spec: {
        ...{},
        ...volume.spec,
        claimRef: sameClaim
          ? ref
          : {
              apiVersion: 'v1',
              kind: 'PersistentVolumeClaim',
              namespace: claim.metadata.namespace,
              name: claim.metadata.name,
              uid: claim.metadata.uid,
              resourceVersion: claim.metadata.resourceVersion,
            },
      },
    },
    changed: true,
  };
}
