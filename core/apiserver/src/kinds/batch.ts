// batch/v1: jobs and cron jobs. A job without a manual selector gets one generated from its uid, which
// is only known once the server has filled in the metadata — hence prepareForCreate, not defaults.
import {
  cronScheduleError,
  defineKind,
  humanAge,
  humanDuration,
  isKnownTimeZone,
  labelSelectorFromObject,
  RESOURCES,
  type CronJob,
  type CronJobSpec,
  type Job,
  type JobCondition,
  type JobSpec,
  type LabelSelector,
  type ObjectMeta,
  type PodSpec,
  type ResourceDefinition,
  type StatusCause,
} from '@skiff/api';
import {
  defaultPodTemplate,
  fieldErrors,
  isDNS1123Label,
  isQualifiedName,
  semanticEqual,
  validateImmutable,
  validateLabelSelector,
  validateNonnegative,
  validatePodTemplateSpec,
} from '@skiff/api/validation';
import { AGE_COLUMN, column, computed, selectorCell, templateColumns } from './columns.js';
import { selectorField } from './field-selectors.js';
import { domainPrefixedPathErrors } from './networking.js';

export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
const LEGACY_JOB_NAME_LABEL = 'job-name';

const MAX_INT32 = 2147483647;
const MAX_PARALLELISM_INDEXED = 100_000;
const MAX_FAILED_INDEXES = 100_000;
const COMPLETIONS_SOFT_LIMIT = 100_000;
const PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000;
const MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000;
const MAX_POD_FAILURE_RULES = 20;
const MAX_EXIT_CODE_VALUES = 255;
const MAX_POD_CONDITION_PATTERNS = 20;
const MAX_MANAGED_BY_LENGTH = 63;
const MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024;
const MAX_SUCCESS_RULES = 20;
/** The cron job controller appends an 11-character suffix to job names, which must stay DNS labels. */
const MAX_CRONJOB_NAME_LENGTH = 52;

/** Defaults run before validation, so a job's spec may still be missing or incomplete. */
type UnvalidatedJob = { metadata: ObjectMeta; spec?: Partial<JobSpec> };

const isIndexed = (spec: Partial<JobSpec>) => spec.completionMode === 'Indexed';

// ---- jobs -----------------------------------------------------------------------------------------------

function defaultJob(job: UnvalidatedJob): void {
  const spec = (job.spec ??= {});
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined ? MAX_INT32 : 6;
  const templateLabels = spec.template?.metadata?.labels;
  if (templateLabels && Object.keys(job.metadata.labels ?? {}).length === 0) job.metadata.labels = { ...templateLabels };
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  for (const rule of spec.podFailurePolicy?.rules ?? []) for (const pattern of rule.onPodConditions ?? []) pattern.status ||= 'True';
  spec.podReplacementPolicy ??= spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
  defaultPodTemplate(spec.template);
}

/** Labels the template with the job's name and uid (unless the user set them) and selects on the uid. */
function generateSelector(job: UnvalidatedJob): void {
  const spec = (job.spec ??= {});
  const template = (spec.template ??= { spec: { containers: [] } });
  const metadata = (template.metadata ??= {});
  const labels = (metadata.labels ??= {});
  const name = job.metadata.name ?? '';
  const uid = job.metadata.uid ?? '';
  for (const key of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) labels[key] ??= name;
  for (const key of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) labels[key] ??= uid;
  const selector = (spec.selector ??= {});
  const matchLabels = (selector.matchLabels ??= {});
  matchLabels[CONTROLLER_UID_LABEL] ??= uid;
}

function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean | undefined {
  try {
    return labelSelectorFromObject(selector).matches(labels);
  } catch {
    return undefined;
  }
}

function hasLabel(labels: Record<string, string> | undefined, key: string, expected: string): StatusCause[] {
  const field = `spec.template.metadata.labels[${key}]`;
  if (labels?.[key] === undefined) return [fieldErrors.required(field, `must be '${expected}'`)];
  return labels[key] === expected ? [] : [fieldErrors.invalid(field, labels[key], `must be '${expected}'`)];
}

/** Without a manual selector the selector and template labels must be the generated ones. */
function validateGeneratedSelector(job: Job, prefixedLabels: boolean): StatusCause[] {
  const spec: Partial<JobSpec> = job.spec ?? {};
  if (spec.manualSelector === true || !spec.selector) return [];
  const causes: StatusCause[] = [];
  const uid = job.metadata.uid ?? '';
  const name = job.metadata.name ?? '';
  if (!uid) causes.push(fieldErrors.required('metadata.uid'));
  const labels = spec.template?.metadata?.labels;
  causes.push(...hasLabel(labels, LEGACY_CONTROLLER_UID_LABEL, uid), ...hasLabel(labels, LEGACY_JOB_NAME_LABEL, name));
  const expected: Record<string, string> = { [LEGACY_CONTROLLER_UID_LABEL]: uid, [LEGACY_JOB_NAME_LABEL]: name };
  if (prefixedLabels) {
    causes.push(...hasLabel(labels, CONTROLLER_UID_LABEL, uid), ...hasLabel(labels, JOB_NAME_LABEL, name));
    expected[CONTROLLER_UID_LABEL] = uid;
    expected[JOB_NAME_LABEL] = name;
  }
  if (selectorMatches(spec.selector, expected) === false) causes.push(fieldErrors.invalid('spec.selector', spec.selector, '`selector` not auto-generated'));
  return causes;
}

/** "1,3-5,7": increasing intervals of indexes below `completions`; the number of indexes, or why not. */
export function parseIndexes(text: string, completions: number): number | string {
  if (text === '') return 0;
  let last: number | undefined;
  let total = 0;
  for (const interval of text.split(',')) {
    const parts = interval.split('-');
    if (parts.length > 2) return `the fragment "${interval}" violates the requirement that an index interval can have at most two parts separated by '-'`;
    let low = 0;
    let high = 0;
    for (const [i, part] of parts.entries()) {
      if (!/^[+-]?\d+$/.test(part)) return `cannot convert string to integer for index: "${part}"`;
      const value = Number(part);
      if (value >= completions) return `too large index: "${part}"`;
      if (i === 0) low = value;
      high = value;
    }
    if (parts.length === 2 && low >= high) return `non-increasing order, previous: ${low}, current: ${high}`;
    if (last !== undefined && last >= low) return `non-increasing order, previous: ${last}, current: ${low}`;
    total += high - low + 1;
    last = high;
  }
  return total;
}

function validatePodFailurePolicy(spec: Partial<JobSpec>, path: string): StatusCause[] {
  const rules = spec.podFailurePolicy?.rules ?? [];
  const causes: StatusCause[] = [];
  if (rules.length > MAX_POD_FAILURE_RULES) causes.push(fieldErrors.tooMany(`${path}.rules`, rules.length, MAX_POD_FAILURE_RULES));
  const template = spec.template?.spec;
  const containerNames = new Set([...(template?.containers ?? []), ...(template?.initContainers ?? [])].map((c) => c.name));
  rules.forEach((rule, i) => {
    const at = `${path}.rules[${i}]`;
    if (!rule.action) causes.push(fieldErrors.required(`${at}.action`, 'valid values: ["Count" "FailIndex" "FailJob" "Ignore"]'));
    else if (rule.action === 'FailIndex' && spec.backoffLimitPerIndex === undefined)
      causes.push(fieldErrors.invalid(`${at}.action`, rule.action, 'requires the backoffLimitPerIndex to be set'));
    const exitCodes = rule.onExitCodes;
    if (exitCodes) {
      const codesAt = `${at}.onExitCodes`;
      if (!exitCodes.operator) causes.push(fieldErrors.required(`${codesAt}.operator`, 'valid values: ["In" "NotIn"]'));
      if (exitCodes.containerName !== undefined && !containerNames.has(exitCodes.containerName))
        causes.push(
          fieldErrors.invalid(`${codesAt}.containerName`, exitCodes.containerName, 'must be one of the container or initContainer names in the pod template'),
        );
      const values = exitCodes.values ?? [];
      if (values.length === 0) causes.push(fieldErrors.invalid(`${codesAt}.values`, values, 'at least one value is required'));
      else if (values.length > MAX_EXIT_CODE_VALUES) causes.push(fieldErrors.tooMany(`${codesAt}.values`, values.length, MAX_EXIT_CODE_VALUES));
      const seen = new Set<number>();
      values.forEach((value, j) => {
        if (exitCodes.operator === 'In' && value === 0) causes.push(fieldErrors.invalid(`${codesAt}.values[${j}]`, value, 'must not be 0 for the In operator'));
        if (seen.has(value)) causes.push(fieldErrors.duplicate(`${codesAt}.values[${j}]`, value));
        seen.add(value);
      });
      if (values.some((value, j) => j > 0 && values[j - 1]! > value)) causes.push(fieldErrors.invalid(`${codesAt}.values`, values, 'must be ordered'));
    }
    const patterns = rule.onPodConditions ?? [];
    if (patterns.length > MAX_POD_CONDITION_PATTERNS) causes.push(fieldErrors.tooMany(`${at}.onPodConditions`, patterns.length, MAX_POD_CONDITION_PATTERNS));
    patterns.forEach((pattern, j) => {
      const patternAt = `${at}.onPodConditions[${j}]`;
      const type = pattern.type ?? '';
      if (!type) causes.push(fieldErrors.required(`${patternAt}.type`));
      else causes.push(...isQualifiedName(type).map((message) => fieldErrors.invalid(`${patternAt}.type`, type, message)));
      if (!pattern.status) causes.push(fieldErrors.required(`${patternAt}.status`, 'valid values: ["False" "True" "Unknown"]'));
      else if (!['False', 'True', 'Unknown'].includes(pattern.status))
        causes.push(fieldErrors.notSupported(`${patternAt}.status`, pattern.status, ['False', 'True', 'Unknown']));
    });
    if (exitCodes && patterns.length > 0) causes.push(fieldErrors.invalid(at, '', 'specifying both OnExitCodes and OnPodConditions is not supported'));
    if (!exitCodes && patterns.length === 0) causes.push(fieldErrors.invalid(at, '', 'specifying one of OnExitCodes and OnPodConditions is required'));
  });
  return causes;
}

function validateSuccessPolicy(spec: Partial<JobSpec>, path: string): StatusCause[] {
  if (!isIndexed(spec)) return [fieldErrors.invalid(path, spec.successPolicy, 'requires indexed completion mode')];
  const rules = spec.successPolicy?.rules ?? [];
  const causes: StatusCause[] = [];
  if (rules.length === 0) causes.push(fieldErrors.required(`${path}.rules`, 'at least one rules must be specified when the successPolicy is specified'));
  if (rules.length > MAX_SUCCESS_RULES) causes.push(fieldErrors.tooMany(`${path}.rules`, rules.length, MAX_SUCCESS_RULES));
  const completions = spec.completions ?? 0;
  rules.forEach((rule, i) => {
    const at = `${path}.rules[${i}]`;
    if (rule.succeededCount === undefined && rule.succeededIndexes === undefined)
      causes.push(fieldErrors.required(at, 'at least one of succeededCount or succeededIndexes must be specified'));
    let total = 0;
    if (rule.succeededIndexes !== undefined) {
      if (rule.succeededIndexes.length > MAX_SUCCEEDED_INDEXES_LENGTH) causes.push(fieldErrors.tooLong(`${at}.succeededIndexes`, MAX_SUCCEEDED_INDEXES_LENGTH));
      const parsed = parseIndexes(rule.succeededIndexes, completions);
      if (typeof parsed === 'string')
        causes.push(fieldErrors.invalid(`${at}.succeededIndexes`, rule.succeededIndexes, `error parsing succeededIndexes: ${parsed}`));
      else total = parsed;
    }
    if (rule.succeededCount !== undefined) {
      const count = rule.succeededCount;
      causes.push(...validateNonnegative(count, `${at}.succeededCount`));
      if (count > completions)
        causes.push(fieldErrors.invalid(`${at}.succeededCount`, count, `must be less than or equal to ${completions} (the number of specified completions)`));
      if (rule.succeededIndexes !== undefined && count > total)
        causes.push(
          fieldErrors.invalid(
            `${at}.succeededCount`,
            count,
            `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`,
          ),
        );
    }
  });
  return causes;
}

/** What a job spec must satisfy, in a Job or in a CronJob's job template (`path` is where it sits). */
function validateJobSpecBase(spec: Partial<JobSpec>, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const field of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex'] as const) {
    causes.push(...validateNonnegative(spec[field], `${path}.${field}`));
  }
  if (spec.maxFailedIndexes !== undefined) {
    causes.push(...validateNonnegative(spec.maxFailedIndexes, `${path}.maxFailedIndexes`));
    if (spec.backoffLimitPerIndex === undefined) causes.push(fieldErrors.required(`${path}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  }
  if (spec.managedBy !== undefined) {
    causes.push(...domainPrefixedPathErrors(spec.managedBy, `${path}.managedBy`));
    if (spec.managedBy.length > MAX_MANAGED_BY_LENGTH)
      causes.push(fieldErrors.invalid(`${path}.managedBy`, spec.managedBy, `must be no more than ${MAX_MANAGED_BY_LENGTH} bytes`));
  }
  if (isIndexed(spec)) {
    if (spec.completions === undefined) causes.push(fieldErrors.required(`${path}.completions`, 'when completion mode is Indexed'));
    if ((spec.parallelism ?? 0) > MAX_PARALLELISM_INDEXED)
      causes.push(
        fieldErrors.invalid(
          `${path}.parallelism`,
          spec.parallelism,
          `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`,
        ),
      );
    if (spec.completions !== undefined && spec.maxFailedIndexes !== undefined && spec.maxFailedIndexes > spec.completions)
      causes.push(fieldErrors.invalid(`${path}.maxFailedIndexes`, spec.maxFailedIndexes, 'must be less than or equal to completions'));
    if ((spec.maxFailedIndexes ?? 0) > MAX_FAILED_INDEXES)
      causes.push(fieldErrors.invalid(`${path}.maxFailedIndexes`, spec.maxFailedIndexes, `must be less than or equal to ${MAX_FAILED_INDEXES}`));
    if ((spec.completions ?? 0) > COMPLETIONS_SOFT_LIMIT && spec.backoffLimitPerIndex !== undefined) {
      const limit = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`;
      if (spec.maxFailedIndexes === undefined)
        causes.push(fieldErrors.required(`${path}.maxFailedIndexes`, `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`));
      if ((spec.parallelism ?? 0) > PARALLELISM_LIMIT_HIGH_COMPLETIONS)
        causes.push(
          fieldErrors.invalid(`${path}.parallelism`, spec.parallelism, `must be less than or equal to ${PARALLELISM_LIMIT_HIGH_COMPLETIONS} ${limit}`),
        );
      if ((spec.maxFailedIndexes ?? 0) > MAX_FAILED_INDEXES_HIGH_COMPLETIONS)
        causes.push(
          fieldErrors.invalid(
            `${path}.maxFailedIndexes`,
            spec.maxFailedIndexes,
            `must be less than or equal to ${MAX_FAILED_INDEXES_HIGH_COMPLETIONS} ${limit}`,
          ),
        );
    }
  } else {
    if (spec.backoffLimitPerIndex !== undefined)
      causes.push(fieldErrors.invalid(`${path}.backoffLimitPerIndex`, spec.backoffLimitPerIndex, 'requires indexed completion mode'));
    if (spec.maxFailedIndexes !== undefined)
      causes.push(fieldErrors.invalid(`${path}.maxFailedIndexes`, spec.maxFailedIndexes, 'requires indexed completion mode'));
  }
  if (spec.podFailurePolicy) causes.push(...validatePodFailurePolicy(spec, `${path}.podFailurePolicy`));
  if (spec.successPolicy) causes.push(...validateSuccessPolicy(spec, `${path}.successPolicy`));
  if (spec.podFailurePolicy && spec.podReplacementPolicy !== undefined && spec.podReplacementPolicy !== 'Failed')
    causes.push(fieldErrors.notSupported(`${path}.podReplacementPolicy`, spec.podReplacementPolicy, ['Failed']));
  causes.push(...validatePodTemplateSpec(spec.template, `${path}.template`));
  // The pod defaults make an unset restart policy Always, which a job may not use.
  const restartPolicy = spec.template?.spec?.restartPolicy ?? '';
  const restartAt = `${path}.template.spec.restartPolicy`;
  if (restartPolicy === 'Always' || restartPolicy === '') causes.push(fieldErrors.required(restartAt, 'valid values: "OnFailure", "Never"'));
  else if (restartPolicy === 'OnFailure' && spec.podFailurePolicy)
    causes.push(fieldErrors.invalid(restartAt, restartPolicy, 'only "Never" is supported when podFailurePolicy is specified'));
  return causes;
}

function validateJobSpec(spec: Partial<JobSpec>): StatusCause[] {
  const causes = validateJobSpecBase(spec, 'spec');
  if (!spec.selector) causes.push(fieldErrors.required('spec.selector'));
  else {
    causes.push(...validateLabelSelector(spec.selector, 'spec.selector'));
    const labels = spec.template?.metadata?.labels ?? {};
    if (selectorMatches(spec.selector, labels) === false)
      causes.push(fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  return causes;
}

/** A suspended job that never started may change where its pods run; otherwise the template is fixed. */
function validateTemplateUpdate(spec: Partial<JobSpec>, old: Job): StatusCause[] {
  const before = structuredClone(old.spec?.template);
  const after = spec.template;
  if (old.spec?.suspend === true && !old.status?.startTime && before && after) {
    const meta = (before.metadata ??= {});
    meta.labels = after.metadata?.labels;
    meta.annotations = after.metadata?.annotations;
    const podSpec = before.spec;
    const newPodSpec: PodSpec | undefined = after.spec;
    podSpec.nodeSelector = newPodSpec?.nodeSelector;
    podSpec.tolerations = newPodSpec?.tolerations;
    podSpec.schedulingGates = newPodSpec?.schedulingGates;
    const affinity = newPodSpec?.affinity;
    const { nodeAffinity: _replaced, ...oldAffinity } = podSpec.affinity ?? {};
    if (affinity) podSpec.affinity = { ...{}, ...oldAffinity, ...(affinity.nodeAffinity !== undefined ? { nodeAffinity: affinity.nodeAffinity } : {}) };
    else podSpec.affinity = Object.keys(oldAffinity).length ? oldAffinity : undefined;
  }
  return validateImmutable(after, before, 'spec.template');
}

function validateJobUpdate(job: Job, old: Job): StatusCause[] {
  const spec: Partial<JobSpec> = job.spec ?? {};
  const before: Partial<JobSpec> = old.spec ?? {};
  const causes: StatusCause[] = [];
  // Indexed jobs are elastic: completions may change together with parallelism.
  if (!semanticEqual(spec.completions, before.completions)) {
    if (!isIndexed(spec)) causes.push(...validateImmutable(spec.completions, before.completions, 'spec.completions'));
    else if (spec.completions !== undefined && spec.completions !== spec.parallelism)
      causes.push(fieldErrors.invalid('spec.completions', spec.completions, 'can only be modified in tandem with spec.parallelism'));
  }
  causes.push(...validateImmutable(spec.selector, before.selector, 'spec.selector'));
  causes.push(...validateTemplateUpdate(spec, old));
  for (const field of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy'] as const) {
    causes.push(...validateImmutable(spec[field], before[field], `spec.${field}`));
  }
  return causes;
}

function validateJob(job: Job, old?: Job): StatusCause[] {
  const spec: Partial<JobSpec> = job.spec ?? {};
  // Jobs created before the prefixed labels existed are not held to them.
  const prefixedLabels = old ? old.spec?.template?.metadata?.labels?.[JOB_NAME_LABEL] !== undefined : true;
  const causes = [...validateGeneratedSelector(job, prefixedLabels), ...validateJobSpec(spec)];
  const completions = spec.completions ?? 0;
  if (isIndexed(spec) && completions > 0) {
    // Indexed pods are named `<job>-<index>`, which must stay a DNS label.
    const hostname = `${job.metadata.name ?? ''}-${completions - 1}`;
    if (isDNS1123Label(hostname).length > 0)
      causes.push(fieldErrors.invalid('metadata.name', job.metadata.name, `will not able to create pod with invalid DNS label: ${hostname}`));
  }
  if (old) causes.push(...validateJobUpdate(job, old));
  return causes;
}

/** The status a condition type has, from the first condition of that type (kubectl's reading). */
function conditionTrue(conditions: JobCondition[] | undefined, type: string): boolean {
  return conditions?.find((c) => c.type === type)?.status === 'True';
}

function jobStatus(job: Job): string {
  const conditions = job.status?.conditions;
  if (conditionTrue(conditions, 'Complete')) return 'Complete';
  if (conditionTrue(conditions, 'Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp) return 'Terminating';
  if (conditionTrue(conditions, 'Suspended')) return 'Suspended';
  if (conditionTrue(conditions, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function jobCompletions(job: Job): string {
  const succeeded = job.status?.succeeded ?? 0;
  if (job.spec?.completions !== undefined) return `${succeeded}/${job.spec.completions}`;
  const parallelism = job.spec?.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(job: Job, now: number): string {
  const start = job.status?.startTime;
  if (!start) return '';
  const completion = job.status?.completionTime;
  if (!completion) return humanAge(start, now);
  return humanDuration(Date.parse(completion) - Date.parse(start));
}

export const jobs = defineKind<Job>({
  ...{},
  ...RESOURCES.jobs,
  subresources: ['status'],
  columns: [
    computed('Status', jobStatus),
    computed('Completions', jobCompletions),
    computed('Duration', jobDuration),
    AGE_COLUMN,
    ...templateColumns('.spec.template', '.spec.selector'),
  ],
  strategy: {
    defaults: defaultJob,
    prepareForCreate(job) {
      job.status = {};
      if (job.spec?.manualSelector !== true) generateSelector(job);
    },
    validate: validateJob,
    fieldSelectors: { 'status.successful': selectorField((job) => job.status?.succeeded ?? 0) },
  },
});

// ---- cron jobs ------------------------------------------------------------------------------------------

const TIME_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

function validateTimeZone(zone: string | undefined): StatusCause[] {
  const field = 'spec.timeZone';
  if (zone === undefined) return [];
  if (zone === '') return [fieldErrors.invalid(field, zone, 'timeZone must be nil or non-empty string')];
  if (zone.split('/').some((part) => part === '.' || part === '..' || part.startsWith('-') || !TIME_ZONE_PART.test(part)))
    return [fieldErrors.invalid(field, zone, `unknown time zone ${zone}`)];
  if (zone.toLowerCase() === 'local')
    return [fieldErrors.invalid(field, zone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones')];
  return isKnownTimeZone(zone) ? [] : [fieldErrors.invalid(field, zone, `unknown time zone ${zone}`)];
}

function validateCronJob(cronJob: CronJob, old?: CronJob): StatusCause[] {
  const spec: Partial<CronJobSpec> = cronJob.spec ?? {};
  const before = old?.spec;
  const causes: StatusCause[] = [];
  const schedule = spec.schedule ?? '';
  if (schedule) {
    const error = cronScheduleError(schedule);
    if (error) causes.push(fieldErrors.invalid('spec.schedule', schedule, error));
    // TZ= in the schedule is only kept on cron jobs that already had it.
    const allowTZ = before?.schedule?.includes('TZ') ?? false;
    if (schedule.includes('TZ')) {
      if (!allowTZ) causes.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
      else if (spec.timeZone !== undefined)
        causes.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    }
  }
  causes.push(...validateNonnegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  if (!before || before.timeZone !== spec.timeZone) causes.push(...validateTimeZone(spec.timeZone));
  if (!spec.concurrencyPolicy) causes.push(fieldErrors.required('spec.concurrencyPolicy'));
  const jobSpec: Partial<JobSpec> = spec.jobTemplate?.spec ?? {};
  causes.push(...validateJobSpecBase(jobSpec, 'spec.jobTemplate.spec'));
  if (jobSpec.selector) causes.push(fieldErrors.invalid('spec.jobTemplate.spec.selector', jobSpec.selector, '`selector` will be auto-generated'));
  if (jobSpec.manualSelector === true) causes.push(fieldErrors.notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  causes.push(...validateNonnegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
  causes.push(...validateNonnegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  // Only new names are held to the limit, so older, longer-named cron jobs can still be updated.
  const name = cronJob.metadata.name ?? '';
  if (!old && name.length > MAX_CRONJOB_NAME_LENGTH)
    causes.push(fieldErrors.invalid('metadata.name', name, `must be no more than ${MAX_CRONJOB_NAME_LENGTH} characters`));
  return causes;
}

/** Defaults run before validation, so the spec may still be missing or incomplete. */
function defaultCronJob(cronJob: { spec?: Partial<CronJobSpec> }): void {
  const spec = (cronJob.spec ??= {});
  spec.concurrencyPolicy ||= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  defaultPodTemplate(spec.jobTemplate?.spec?.template);
}

const printBool = (value: boolean | undefined) => (value === undefined ? '<unset>' : value ? 'True' : 'False');

export const cronJobs = defineKind<CronJob>({
  ...{},
  ...RESOURCES.cronjobs,
  subresources: ['status'],
  columns: [
    column('Schedule', '.spec.schedule'),
    computed('Timezone', (cj) => cj.spec?.timeZone ?? '<none>'),
    computed('Suspend', (cj) => printBool(cj.spec?.suspend), { type: 'boolean' }),
    computed('Active', (cj) => cj.status?.active?.length ?? 0, { type: 'integer' }),
    computed('Last Schedule', (cj, now) => (cj.status?.lastScheduleTime ? humanAge(cj.status.lastScheduleTime, now) : '<none>')),
    AGE_COLUMN,
    ...templateColumns('.spec.jobTemplate.spec.template'),
    computed('Selector', (cj) => selectorCell(cj.spec?.jobTemplate?.spec?.selector), { priority: 1 }),
  ],
  strategy: { defaults: defaultCronJob, validate: validateCronJob },
});

export const BATCH_KINDS: ResourceDefinition[] = [cronJobs, jobs];
