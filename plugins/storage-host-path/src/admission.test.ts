import type { PersistentVolumeClaim, StorageClass } from '@skiff/api';
import { admissionRequest } from '@skiff/testing';
import { describe, expect, it } from 'vitest';
import { admitStorage } from './admission.js';
import { ANNOTATION, FINALIZER } from './names.js';

const classes: StorageClass[] = [
  { metadata: { name: 'plain', creationTimestamp: '2024-03-01T00:00:00Z' }, provisioner: 'x' },
  { metadata: { name: 'standard', creationTimestamp: '2024-01-01T00:00:00Z', annotations: { [ANNOTATION.IS_DEFAULT_CLASS]: 'true' } }, provisioner: 'x' },
];
const options = { listStorageClasses: async () => classes, protection: true };

const claimRequest = (storageClassName?: string | null, operation: 'CREATE' | 'UPDATE' = 'CREATE') =>
  admissionRequest({
    operation,
    resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(storageClassName !== undefined && { storageClassName }) },
    } as PersistentVolumeClaim,
  });

const spec = (request: ReturnType<typeof claimRequest>) => (request.object as PersistentVolumeClaim).spec!;

describe('admitStorage', () => {
  it('gives a claim created without a class the default class, and the pvc-protection finalizer', async () => {
    for (const missing of [undefined, null]) {
      const request = claimRequest(missing);
      await admitStorage(request, options);
      expect(spec(request).storageClassName).toBe('standard');
      expect(request.object?.metadata.finalizers).toEqual([FINALIZER.PVC_PROTECTION]);
    }
  });

  it('keeps a class that was asked for, the empty class included', async () => {
    for (const asked of ['', 'plain']) {
      const request = claimRequest(asked);
      await admitStorage(request, options);
      expect(spec(request).storageClassName).toBe(asked);
    }
  });

  it('leaves the class unset when no class is the default', async () => {
    const request = claimRequest();
    await admitStorage(request, { ...options, listStorageClasses: async () => [classes[0]!] });
    expect(spec(request).storageClassName).toBeUndefined();
  });

  it('does not touch updates', async () => {
    const request = claimRequest(undefined, 'UPDATE');
    await admitStorage(request, options);
    expect(spec(request).storageClassName).toBeUndefined();
    expect(request.object?.metadata.finalizers).toBeUndefined();
  });

  it('puts pv-protection on new volumes, once, and no finalizer when protection is off', async () => {
    const volumeRequest = () =>
      admissionRequest({
        resource: { group: '', version: 'v1', resource: 'persistentvolumes' },
        object: { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'v', finalizers: [FINALIZER.PV_PROTECTION, 'example.com/x'] } },
      });
    const protectedRequest = volumeRequest();
    await admitStorage(protectedRequest, options);
    expect(protectedRequest.object?.metadata.finalizers).toEqual([FINALIZER.PV_PROTECTION, 'example.com/x']);

    const request = claimRequest();
    await admitStorage(request, { ...options, protection: false });
    expect(request.object?.metadata.finalizers).toBeUndefined();
  });
});
