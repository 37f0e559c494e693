import { RESOURCES, type KubeObject, type LabelSelector, type PodTemplateSpec, type ResourceType } from '@skiff/api';

export const DAEMONSETS: ResourceType = RESOURCES.daemonsets;
export const CONTROLLER_REVISIONS: ResourceType = RESOURCES.controllerrevisions;

export type IntOrPercent = number | string;

export interface DaemonSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: { maxUnavailable?: IntOrPercent; maxSurge?: IntOrPercent };
}

export interface DaemonSetSpec {
  selector: LabelSelector;
  template: PodTemplateSpec;
  updateStrategy?: DaemonSetUpdateStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
}

export interface DaemonSetStatus {
  currentNumberScheduled: number;
  numberMisscheduled: number;
  desiredNumberScheduled: number;
  numberReady: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  collisionCount?: number;
  conditions?: unknown[];
}

export interface DaemonSet extends KubeObject {
  spec: DaemonSetSpec;
  status?: DaemonSetStatus;
}

export interface ControllerRevision extends KubeObject {
  data?: unknown;
  revision: number;
}
