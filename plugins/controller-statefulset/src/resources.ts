import { RESOURCES, type KubeObject, type LabelSelector, type ObjectMeta, type PodTemplateSpec, type ResourceType } from '@skiff/api';

export const STATEFULSETS: ResourceType = RESOURCES.statefulsets;
export const CONTROLLER_REVISIONS: ResourceType = RESOURCES.controllerrevisions;
export const PERSISTENT_VOLUME_CLAIMS: ResourceType = RESOURCES.persistentvolumeclaims;

export type IntOrPercent = number | string;
export type RetentionPolicyType = 'Retain' | 'Delete';

export interface PersistentVolumeClaim extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { phase?: string; [field: string]: unknown };
}

export interface StatefulSetSpec {
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  serviceName?: string;
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  updateStrategy?: { type?: 'RollingUpdate' | 'OnDelete'; rollingUpdate?: { partition?: number; maxUnavailable?: IntOrPercent } };
  volumeClaimTemplates?: (PersistentVolumeClaim & { metadata: ObjectMeta })[];
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: RetentionPolicyType; whenScaled?: RetentionPolicyType };
  ordinals?: { start?: number };
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  conditions?: unknown[];
}

export interface StatefulSet extends KubeObject {
  spec: StatefulSetSpec;
  status?: StatefulSetStatus;
}

export interface ControllerRevision extends KubeObject {
  data?: unknown;
  revision: number;
}
