import type { AdmissionRequest } from '@skiff/kernel';
import { defaultStorageClass } from './matching.js';
import { FINALIZER } from './names.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from './types.js';

export interface StorageAdmissionOptions {
  /** Lists the StorageClasses (read when a claim without a class is created). */
  listStorageClasses(): Promise<StorageClass[]>;
  /** Add the protection finalizers to new claims and volumes. */
  protection: boolean;
}

const isCore = (request: AdmissionRequest, resource: string) =>
  request.resource.group === '' && request.resource.resource === resource && !request.subresource && request.operation === 'CREATE';

/**
 * Mutating admission for claims and volumes, as two of kube-apiserver's admission plugins do it:
 * DefaultStorageClass gives a claim created without `storageClassName` the default class's name (a
 * claim with `""` asked for no class, and keeps it), and StorageObjectInUseProtection puts
 * `kubernetes.io/pvc-protection` on new claims and `kubernetes.io/pv-protection` on new volumes.
 */
export async function admitStorage(request: AdmissionRequest, options: StorageAdmissionOptions): Promise<void> {
  if (isCore(request, 'persistentvolumeclaims') && request.object) {
    const claim = request.object as PersistentVolumeClaim;
    if (claim.spec && claim.spec.storageClassName == null) {
      const storageClass = defaultStorageClass(await options.listStorageClasses());
      if (storageClass) claim.spec.storageClassName = storageClass.metadata.name;
    }
    if (options.protection) addFinalizer(claim, FINALIZER.PVC_PROTECTION);
  } else if (isCore(request, 'persistentvolumes') && request.object && options.protection) {
    addFinalizer(request.object as PersistentVolume, FINALIZER.PV_PROTECTION);
  }
}

function addFinalizer(object: { metadata: { finalizers?: string[] } }, finalizer: string): void {
  const finalizers = object.metadata.finalizers ?? [];
  if (!finalizers.includes(finalizer)) object.metadata.finalizers = [...finalizers, finalizer];
}
