import { RESOURCES, type KubeObject, type LabelSelector, type ObjectMeta, type PodTemplateSpec, type ResourceType } from '@skiff/api';

export const JOBS: ResourceType = RESOURCES.jobs;
export const CRONJOBS: ResourceType = RESOURCES.cronjobs;

export interface JobCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  activeDeadlineSeconds?: number;
  backoffLimit?: number;
  selector?: LabelSelector;
  manualSelector?: boolean;
  template: PodTemplateSpec;
  ttlSecondsAfterFinished?: number;
  completionMode?: 'NonIndexed' | 'Indexed';
  suspend?: boolean;
  podReplacementPolicy?: 'TerminatingOrFailed' | 'Failed';
  managedBy?: string;
  [field: string]: unknown;
}

export interface UncountedTerminatedPods {
  succeeded?: string[];
  failed?: string[];
}

export interface JobStatus {
  conditions?: JobCondition[];
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  terminating?: number;
  ready?: number;
  completedIndexes?: string;
  uncountedTerminatedPods?: UncountedTerminatedPods;
  [field: string]: unknown;
}

export interface Job extends KubeObject {
  spec: JobSpec;
  status?: JobStatus;
}

export interface JobReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface CronJobSpec {
  schedule: string;
  timeZone?: string;
  startingDeadlineSeconds?: number;
  concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
  suspend?: boolean;
  jobTemplate: { metadata?: ObjectMeta; spec: JobSpec };
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
}

export interface CronJobStatus {
  active?: JobReference[];
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
}

export interface CronJob extends KubeObject {
  spec: CronJobSpec;
  status?: CronJobStatus;
}
