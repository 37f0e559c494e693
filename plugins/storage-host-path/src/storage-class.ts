import { isApiError, RESOURCES, type StorageClass } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { ANNOTATION } from './names.js';

/** The default StorageClass this plugin serves: our provisioner, Delete, bound at once. */
export function defaultClassObject(name: string, provisioner: string): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, annotations: { [ANNOTATION.IS_DEFAULT_CLASS]: 'true' } },
    provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  };
}

/**
 * Creates the class unless one of that name exists. An existing class is left as it is, even if it
 * differs: an administrator may have changed it (made another class the default, or Retain the policy).
 * Answers whether it was created.
 */
export async function ensureStorageClass(client: ApiClient, storageClass: StorageClass): Promise<boolean> {
  try {
    await client.get(RESOURCES.storageclasses, storageClass.metadata.name!);
    return false;
  } catch (err) {
    if (!isApiError(err, 'NotFound')) throw err;
  }
  try {
    await client.create(RESOURCES.storageclasses, storageClass);
    return true;
  } catch (err) {
    if (isApiError(err, 'AlreadyExists')) return false;
    throw err;
  }
}
