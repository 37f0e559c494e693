import type { StorageClass } from '@skiff/api';
import { isAdmissionFor, type AdmissionRequest } from '@skiff/kernel';
import { defaultStorageClass } from './matching.js';
import { FINALIZER } from './names.js';

export interface StorageAdmissionOptions {
  /** Lists the StorageClasses (read when a claim without a class is created). */
  listStorageClasses(): Promise<StorageClass[]>;
  /** Add the protection finalizers to new claims and volumes. */
  protection: boolean;
}

/**
 * Mutating admission for claims and volumes, as two of kube-apiserver's admission plugins do it:
 * DefaultStorageClass gives a claim created without `storageClassName` the default class's name (a
 * claim with `""` asked for no class, and keeps it), and StorageObjectInUseProtection puts
 * `kubernetes.io/pvc-protection` on new claims and `kubernetes.io/pv-protection` on new volumes.
 */
export async function admitStorage(request: AdmissionRequest, options: StorageAdmissionOptions): Promise<void> {
  if (request.operation !== 'CREATE') return;
  if (isAdmissionFor(request, 'persistentvolumeclaims') && request.object) {
    const claim = request.object;
    if (claim.spec && claim.spec.storageClassName == null) {
      const storageClass = defaultStorageClass(await options.listStorageClasses());
      if (storageClass) claim.spec.storageClassName = storageClass.metadata.name;
    }
    if (options.protection) addFinalizer(claim, FINALIZER.PVC_PROTECTION);
  } else if (isAdmissionFor(request, 'persistentvolumes') && request.object && options.protection) {
    addFinalizer(request.object, FINALIZER.PV_PROTECTION);
  }
}

function addFinalizer(object: { metadata: { finalizers?: string[] } }, finalizer: string): void {
  const finalizers = object.metadata.finalizers ?? [];
  if (!finalizers.includes(finalizer)) object.metadata.finalizers = [...finalizers, finalizer];
}
