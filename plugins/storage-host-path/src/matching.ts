import { labelSelectorFromObject, parseBytes, type PersistentVolume, type PersistentVolumeClaim, type Pod, type StorageClass } from '@skiff/api';
import { ANNOTATION, HOSTNAME_LABEL } from './names.js';

const FILESYSTEM = 'Filesystem';

/** A claim's requested storage in bytes (0 when it asks for none, which validation refuses anyway). */
export function requestedBytes(claim: PersistentVolumeClaim): number {
  const request = claim.spec?.resources?.requests?.storage;
  return request === undefined ? 0 : parseBytes(request);
}

export function capacityBytes(volume: PersistentVolume): number {
  const capacity = volume.spec.capacity?.storage;
  return capacity === undefined ? 0 : parseBytes(capacity);
}

/** The class a claim asks for; `""` (and no class at all) means "a volume without a class". */
export function claimClass(claim: PersistentVolumeClaim): string {
  return claim.spec?.storageClassName ?? '';
}

export function claimKey(claim: { metadata: { namespace?: string; name?: string } }): string {
  return `${claim.metadata.namespace}/${claim.metadata.name}`;
}

/**
 * Whether the volume's claimRef names this claim: same namespace and name, and the same uid when the
 * claimRef has one (a claimRef without uid is an administrator pre-binding the volume by name).
 */
export function isVolumeBoundToClaim(volume: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = volume.spec.claimRef;
  if (!ref) return false;
  if (ref.namespace !== claim.metadata.namespace || ref.name !== claim.metadata.name) return false;
  return !ref.uid || ref.uid === claim.metadata.uid;
}

/**
 * Why `volume` cannot serve `claim` (a message fit for an event), or undefined when it can: enough
 * capacity, the same volume mode and class, and every access mode the claim asks for.
 */
export function unsatisfiedBecause(claim: PersistentVolumeClaim, volume: PersistentVolume): string | undefined {
  if (capacityBytes(volume) < requestedBytes(claim)) return 'requested PV is too small';
  if ((volume.spec.volumeMode ?? FILESYSTEM) !== (claim.spec?.volumeMode ?? FILESYSTEM)) return 'incompatible volumeMode';
  if ((volume.spec.storageClassName ?? '') !== claimClass(claim)) return 'storageClassName does not match';
  const offered = new Set(volume.spec.accessModes ?? []);
  if (!(claim.spec?.accessModes ?? []).every((mode) => offered.has(mode))) return 'incompatible accessMode';
  return undefined;
}

/** A volume nobody holds and nobody is deleting: it may be bound to a claim that matches it. */
function isAvailable(volume: PersistentVolume): boolean {
  if (volume.metadata.deletionTimestamp || volume.spec.claimRef) return false;
  const phase = volume.status?.phase;
  return phase === undefined || phase === 'Pending' || phase === 'Available';
}

/**
 * The volume a Pending claim should be bound to, as the PV controller chooses it: a volume already
 * pre-bound to the claim (by a provisioner, an administrator or the scheduler) first, as long as it is big
 * enough and of the same mode; else the smallest available volume that satisfies the claim and matches its
 * selector (ties broken by name, so the choice is stable). A claim whose class binds late
 * (`delayBinding`: WaitForFirstConsumer) takes only a pre-bound volume: which free volume fits is the
 * scheduler's choice, made with the node in mind.
 */
export function findVolumeForClaim(claim: PersistentVolumeClaim, volumes: readonly PersistentVolume[], delayBinding = false): PersistentVolume | undefined {
  const prebound = volumes.find(
    (volume) =>
      !volume.metadata.deletionTimestamp &&
      volume.status?.phase !== 'Released' &&
      volume.status?.phase !== 'Failed' &&
      isVolumeBoundToClaim(volume, claim) &&
      capacityBytes(volume) >= requestedBytes(claim) &&
      (volume.spec.volumeMode ?? FILESYSTEM) === (claim.spec?.volumeMode ?? FILESYSTEM),
  );
  if (prebound || delayBinding) return prebound;
  const selector = claim.spec?.selector ? labelSelectorFromObject(claim.spec?.selector) : undefined;
  return volumes
    .filter((volume) => isAvailable(volume) && !unsatisfiedBecause(claim, volume) && (!selector || selector.matches(volume.metadata.labels)))
    .sort((a, b) => capacityBytes(a) - capacityBytes(b) || a.metadata.name!.localeCompare(b.metadata.name!))[0];
}

export function isDefaultClass(storageClass: StorageClass): boolean {
  const annotations = storageClass.metadata.annotations ?? {};
  return annotations[ANNOTATION.IS_DEFAULT_CLASS] === 'true' || annotations[ANNOTATION.IS_DEFAULT_CLASS_BETA] === 'true';
}

/**
 * The default StorageClass: of the classes annotated as default, the most recently created (as upstream
 * picks when several claim it), ties broken by name.
 */
export function defaultStorageClass(classes: readonly StorageClass[]): StorageClass | undefined {
  const created = (storageClass: StorageClass) => Date.parse(storageClass.metadata.creationTimestamp ?? '') || 0;
  return classes.filter(isDefaultClass).sort((a, b) => created(b) - created(a) || a.metadata.name!.localeCompare(b.metadata.name!))[0];
}

/** The names of the claims a pod mounts. */
export function claimsOfPod(pod: Pod): string[] {
  return (pod.spec?.volumes ?? []).flatMap((volume) => (volume.persistentVolumeClaim?.claimName ? [volume.persistentVolumeClaim.claimName] : []));
}

/** The names of the pods not yet scheduled (and not finished) that mount the claim: what a WaitForFirstConsumer claim waits for. */
export function unscheduledPodsOf(claim: PersistentVolumeClaim, pods: readonly Pod[]): string[] {
  return pods
    .filter(
      (pod) =>
        pod.metadata.namespace === claim.metadata.namespace &&
        !pod.spec?.nodeName &&
        pod.status?.phase !== 'Succeeded' &&
        pod.status?.phase !== 'Failed' &&
        claimsOfPod(pod).includes(claim.metadata.name!),
    )
    .map((pod) => pod.metadata.name!);
}

/** Whether a pod that has not finished (phase Succeeded or Failed) mounts the claim: then the claim must stay. */
export function isClaimInUse(claim: PersistentVolumeClaim, pods: readonly Pod[]): boolean {
  return pods.some(
    (pod) =>
      pod.metadata.namespace === claim.metadata.namespace &&
      pod.status?.phase !== 'Succeeded' &&
      pod.status?.phase !== 'Failed' &&
      claimsOfPod(pod).includes(claim.metadata.name!),
  );
}

/**
 * The PersistentVolume this plugin provisions for `claim` of `storageClass`: named `pvc-<claim uid>`,
 * a host directory at `path`, the claim's size and access modes, pre-bound to the claim, with the class's
 * reclaim policy and mount options. Provisioned for a node the scheduler selected (`hostname`: that node's
 * `kubernetes.io/hostname`), it is pinned to that node by a required node affinity.
 */
export function provisionedVolume(
  claim: PersistentVolumeClaim,
  storageClass: StorageClass,
  path: string,
  provisioner: string,
  hostname?: string,
): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: volumeNameFor(claim),
      annotations: { [ANNOTATION.PROVISIONED_BY]: provisioner, [ANNOTATION.BOUND_BY_CONTROLLER]: 'yes' },
    },
    spec: {
      capacity: { storage: claim.spec!.resources!.requests!.storage! },
      accessModes: [...(claim.spec?.accessModes ?? [])],
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      storageClassName: storageClass.metadata.name,
      volumeMode: claim.spec?.volumeMode ?? FILESYSTEM,
      claimRef: claimRefOf(claim),
      hostPath: { path, type: 'DirectoryOrCreate' },
      ...(storageClass.mountOptions?.length ? { mountOptions: [...storageClass.mountOptions] } : {}),
      ...(hostname !== undefined
        ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [hostname] }] }] } } }
        : {}),
    },
  };
}

export function volumeNameFor(claim: PersistentVolumeClaim): string {
  return `pvc-${claim.metadata.uid}`;
}

export function claimRefOf(claim: PersistentVolumeClaim): NonNullable<PersistentVolume['spec']['claimRef']> {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    namespace: claim.metadata.namespace,
    name: claim.metadata.name,
    uid: claim.metadata.uid,
    resourceVersion: claim.metadata.resourceVersion,
  };
}
