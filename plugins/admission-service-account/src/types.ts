import type { Container, KubeObject } from '@skiff/api';

/** The parts of a ServiceAccount the plugin reads. */
export interface ServiceAccount extends KubeObject {
  secrets?: { name?: string }[];
  imagePullSecrets?: { name?: string }[];
  automountServiceAccountToken?: boolean;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  [field: string]: unknown;
}

export interface Reference {
  name?: string;
}

export interface VolumeProjection {
  secret?: Reference;
  configMap?: Reference & { items?: { key: string; path: string }[] };
  downwardAPI?: { items?: { path: string; fieldRef?: { apiVersion?: string; fieldPath: string } }[] };
  serviceAccountToken?: { path: string; expirationSeconds?: number; audience?: string };
  clusterTrustBundle?: unknown;
  [source: string]: unknown;
}

export interface Volume {
  name: string;
  secret?: { secretName?: string };
  projected?: { sources?: VolumeProjection[]; defaultMode?: number };
  [source: string]: unknown;
}

export interface EnvVar {
  name: string;
  valueFrom?: { secretKeyRef?: Reference };
}

export interface EnvFromSource {
  secretRef?: Reference;
}

/** A container with the fields the plugin reads or adds spelled out. */
export type PodContainer = Omit<Container, 'env'> & { volumeMounts?: VolumeMount[]; env?: EnvVar[]; envFrom?: EnvFromSource[] };
