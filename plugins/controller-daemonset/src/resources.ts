import type { KubeObject, LabelSelector, PodTemplateSpec, ResourceType } from '@skiff/api';

export const DAEMONSETS: ResourceType = Object.freeze({ group: 'apps', version: 'v1', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true });
export const CONTROLLER_REVISIONS: ResourceType = Object.freeze({
  group: 'apps',
  version: 'v1',
  resource: 'controllerrevisions',
  kind: 'ControllerRevision',
  namespaced: true,
});

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
