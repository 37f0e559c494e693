import { POD_CONTROL_EVENT_REASON } from '@skiff/controller-manager';

export const PLUGIN_NAME = '@skiff/plugin-controller-job';

/** The names `enabled` in the controller manager's options refers to, as in kube-controller-manager's --controllers. */
export const JOB_CONTROLLER_NAME = 'job';
export const CRONJOB_CONTROLLER_NAME = 'cronjob';
export const TTL_CONTROLLER_NAME = 'ttl-after-finished';

/** Labels and annotations Kubernetes puts on Job pods and on Jobs a CronJob makes. */
export const JOB_LABEL = Object.freeze({
  CONTROLLER_UID: 'batch.kubernetes.io/controller-uid',
  JOB_NAME: 'batch.kubernetes.io/job-name',
  LEGACY_CONTROLLER_UID: 'controller-uid',
  LEGACY_JOB_NAME: 'job-name',
  /** Annotation and label on pods of Indexed Jobs. */
  COMPLETION_INDEX: 'batch.kubernetes.io/job-completion-index',
  /** Annotation on Jobs a CronJob creates: the scheduled time, RFC 3339 in the CronJob's time zone. */
  CRONJOB_SCHEDULED_TIMESTAMP: 'batch.kubernetes.io/cronjob-scheduled-timestamp',
});

/** The finalizer that keeps a finished pod until the Job controller has counted it. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

/** The environment variable Indexed Job pods read their index from. */
export const COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

/** `spec.managedBy` of Jobs this controller runs (unset means the same). */
export const JOB_CONTROLLER_MANAGER = 'kubernetes.io/job-controller';

/** Job condition types. */
export const JOB_CONDITION = Object.freeze({
  COMPLETE: 'Complete',
  FAILED: 'Failed',
  SUCCESS_CRITERIA_MET: 'SuccessCriteriaMet',
  FAILURE_TARGET: 'FailureTarget',
  SUSPENDED: 'Suspended',
});

/** Why a Job finished, with the message Kubernetes gives (condition reason and message, event on failure). */
export const JOB_FINISH = Object.freeze({
  COMPLETIONS_REACHED: { reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' },
  BACKOFF_LIMIT_EXCEEDED: { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
  DEADLINE_EXCEEDED: { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' },
});

export const JOB_SUSPEND = Object.freeze({
  SUSPENDED: { reason: 'JobSuspended', message: 'Job suspended' },
  RESUMED: { reason: 'JobResumed', message: 'Job resumed' },
});

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  ...{},
  ...POD_CONTROL_EVENT_REASON,
  COMPLETED: 'Completed',
  SUSPENDED: 'Suspended',
  RESUMED: 'Resumed',
  SAW_COMPLETED_JOB: 'SawCompletedJob',
  MISSING_JOB: 'MissingJob',
  UNEXPECTED_JOB: 'UnexpectedJob',
  JOB_ALREADY_ACTIVE: 'JobAlreadyActive',
  MISS_SCHEDULE: 'MissSchedule',
  TOO_MANY_MISSED_TIMES: 'TooManyMissedTimes',
  INVALID_SCHEDULE: 'InvalidSchedule',
  UNKNOWN_TIME_ZONE: 'UnknownTimeZone',
});

/** The most pods one sync of a Job creates, as in kube-controller-manager. */
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;

/** Backoff before a failed Job pod is replaced: 10 s, doubling per failure since the last success, at most 6 minutes. */
export const DEFAULT_POD_FAILURE_BACKOFF_MS = 10_000;
export const MAX_POD_FAILURE_BACKOFF_MS = 6 * 60_000;

/** Annotation kubectl puts on Jobs it creates with `kubectl create job --from=cronjob/…`. */
export const CRONJOB_INSTANTIATE_ANNOTATION = 'cronjob.kubernetes.io/instantiate';
