import type { KubeObject, LabelSelector } from '@skiff/api';

export type AccessMode = 'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod' | (string & {});
export type ReclaimPolicy = 'Delete' | 'Retain' | 'Recycle';

export interface StorageClass extends KubeObject {
  provisioner: string;
  parameters?: Record<string, string>;
  reclaimPolicy?: ReclaimPolicy;
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
  allowVolumeExpansion?: boolean;
  mountOptions?: string[];
}

export interface ClaimRef {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface PersistentVolume extends KubeObject {
  spec: {
    capacity?: Record<string, string>;
    accessModes?: AccessMode[];
    persistentVolumeReclaimPolicy?: ReclaimPolicy;
    storageClassName?: string;
    volumeMode?: string;
    claimRef?: ClaimRef;
    hostPath?: { path: string; type?: string };
    mountOptions?: string[];
    [field: string]: unknown;
  };
  status?: { phase?: 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed'; reason?: string; message?: string; lastPhaseTransitionTime?: string };
}

export interface PersistentVolumeClaim extends KubeObject {
  spec: {
    accessModes?: AccessMode[];
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
    volumeName?: string;
    storageClassName?: string | null;
    volumeMode?: string;
    selector?: LabelSelector;
    [field: string]: unknown;
  };
  status?: { phase?: 'Pending' | 'Bound' | 'Lost'; capacity?: Record<string, string>; accessModes?: AccessMode[]; [field: string]: unknown };
}

/** The part of a Pod the claim protection reads. */
export interface PodUsingClaims extends KubeObject {
  spec?: { volumes?: { name?: string; persistentVolumeClaim?: { claimName?: string } }[] };
  status?: { phase?: string };
}
