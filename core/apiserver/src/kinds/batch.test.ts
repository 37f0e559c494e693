import { describe, expect, it } from 'vitest';
import { BATCH_KINDS, parseIndexes } from './batch.js';
import { kindHarness } from '../test-support/kind-harness.js';

const UID = '0b6c2a4e-1111-4222-8333-944455556666';
const { CREATED, definition, admit, create, cells } = kindHarness(BATCH_KINDS, { uid: UID });

const podTemplate = (restartPolicy?: string) => ({
  spec: { containers: [{ name: 'pi', image: 'perl:5.34' }], ...(restartPolicy ? { restartPolicy } : {}) },
});

const jobBody = { metadata: { name: 'pi', namespace: 'default' }, spec: { template: podTemplate('Never') } };

describe('jobs', () => {
  it('defaults a job and generates its selector and template labels from the uid', () => {
    const job = create('jobs', jobBody) as any;
    expect(job.spec).toMatchObject({
      parallelism: 1,
      completions: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': UID } },
    });
    expect(job.spec.manualSelector).toBeUndefined();
    const labels = { 'batch.kubernetes.io/controller-uid': UID, 'batch.kubernetes.io/job-name': 'pi', 'controller-uid': UID, 'job-name': 'pi' };
    expect(job.spec.template.metadata.labels).toEqual(labels);
    expect(job.metadata.labels).toEqual(labels);
    expect(job.spec.template.spec.dnsPolicy).toBe('ClusterFirst');
    expect(job.status).toEqual({});
  });

  it('keeps both counts unset only when one is given, and backs off per index without limit', () => {
    const job = create('jobs', { ...jobBody, spec: { ...jobBody.spec, parallelism: 3 } }) as any;
    expect([job.spec.parallelism, job.spec.completions]).toEqual([3, undefined]);
    const indexed = create('jobs', {
      ...jobBody,
      spec: {
        ...jobBody.spec,
        completions: 4,
        completionMode: 'Indexed',
        backoffLimitPerIndex: 1,
        podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [1] } }] },
      },
    }) as any;
    expect([indexed.spec.backoffLimit, indexed.spec.podReplacementPolicy]).toEqual([2147483647, 'Failed']);
  });

  it('requires a restart policy of OnFailure or Never', () => {
    expect(admit('jobs', { ...jobBody, spec: { template: podTemplate() } }).causes).toEqual([
      'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]);
    expect(admit('jobs', { ...jobBody, spec: { template: podTemplate('Always') } }).causes).toEqual([
      'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]);
  });

  it('checks counts, manual selectors and the indexed-job limits', () => {
    const spec = { ...jobBody.spec, parallelism: -1, backoffLimit: -2, manualSelector: true, selector: { matchLabels: { app: 'x' } } };
    expect(admit('jobs', { ...jobBody, spec }).causes).toEqual([
      'spec.parallelism: Invalid value: -1: must be greater than or equal to 0',
      'spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0',
      'spec.template.metadata.labels: Invalid value: {}: `selector` does not match template `labels`',
    ]);
    expect(admit('jobs', { ...jobBody, spec: { ...jobBody.spec, completionMode: 'Indexed', parallelism: 2 } }).causes).toEqual([
      'spec.completions: Required value: when completion mode is Indexed',
    ]);
    expect(admit('jobs', { ...jobBody, spec: { ...jobBody.spec, backoffLimitPerIndex: 1 } }).causes).toEqual([
      'spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode',
    ]);
  });

  it('rejects a selector the server did not generate', () => {
    const { causes } = admit('jobs', { ...jobBody, spec: { ...jobBody.spec, selector: { matchLabels: { app: 'x' } } } });
    expect(causes).toEqual([
      'spec.selector: Invalid value: {"matchLabels":{"app":"x","batch.kubernetes.io/controller-uid":"0b6c2a4e-1111-4222-8333-944455556666"}}: `selector` not auto-generated',
      'spec.template.metadata.labels: Invalid value: {"job-name":"pi","batch.kubernetes.io/job-name":"pi","controller-uid":"0b6c2a4e-1111-4222-8333-944455556666","batch.kubernetes.io/controller-uid":"0b6c2a4e-1111-4222-8333-944455556666"}: `selector` does not match template `labels`',
    ]);
  });

  it('keeps selector, template and completions fixed, except scheduling of a suspended job that never ran', () => {
    const old = create('jobs', { ...jobBody, spec: { ...jobBody.spec, suspend: true } }) as any;
    const update = structuredClone(old);
    update.spec.template.spec.nodeSelector = { disk: 'ssd' };
    update.spec.parallelism = 5;
    expect(admit('jobs', update, old).causes).toEqual([]);
    update.spec.template.spec.containers[0].image = 'perl:5.36';
    update.spec.completions = 2;
    update.spec.completionMode = 'Indexed';
    const messages = admit('jobs', update, old).causes.map((c) => c.split(':')[0]);
    expect(messages).toEqual(['spec.completions', 'spec.template', 'spec.completionMode']);
    const running = structuredClone(old);
    running.spec.suspend = false;
    running.status = { startTime: CREATED };
    const moved = structuredClone(running);
    moved.spec.template.spec.nodeSelector = { disk: 'ssd' };
    expect(admit('jobs', moved, running).causes.map((c) => c.split(':')[0])).toEqual(['spec.template']);
  });

  it('prints status, completions and duration as kubectl does, and selects by successful pods', () => {
    const job = create('jobs', jobBody) as any;
    expect(cells('jobs', job)).toEqual(['pi', 'Running', '0/1', '', '3h5m', 'pi', 'perl:5.34', `batch.kubernetes.io/controller-uid=${UID}`]);
    job.status = {
      startTime: '2024-05-01T11:00:00Z',
      completionTime: '2024-05-01T11:00:42Z',
      succeeded: 1,
      conditions: [{ type: 'Complete', status: 'True' }],
    };
    expect(cells('jobs', job).slice(1, 4)).toEqual(['Complete', '1/1', '42s']);
    job.spec.completions = undefined;
    job.spec.parallelism = 3;
    job.status = { startTime: '2024-05-01T11:58:00Z', conditions: [{ type: 'Suspended', status: 'True' }] };
    expect(cells('jobs', job).slice(1, 4)).toEqual(['Suspended', '0/1 of 3', '2m']);
    expect(definition('jobs').fieldSelectors!['status.successful']!(job)).toBe('0');
  });

  it('parses index lists', () => {
    expect(parseIndexes('0,2-4', 5)).toBe(4);
    expect(parseIndexes('3-1', 5)).toBe('non-increasing order, previous: 3, current: 1');
    expect(parseIndexes('7', 5)).toBe('too large index: "7"');
  });
});

const cronBody = {
  metadata: { name: 'nightly', namespace: 'default' },
  spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: podTemplate('OnFailure') } } },
};

describe('cron jobs', () => {
  it('defaults the policies and history limits and prints like kubectl', () => {
    const cj = create('cronjobs', cronBody) as any;
    expect(cj.spec).toMatchObject({ concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
    expect(cj.spec.jobTemplate.spec.backoffLimit).toBeUndefined();
    expect(cj.spec.jobTemplate.spec.template.spec.schedulerName).toBe('default-scheduler');
    expect(cells('cronjobs', cj)).toEqual(['nightly', '0 3 * * *', '<none>', 'False', 0, '<none>', '3h5m', 'pi', 'perl:5.34', '<none>']);
    cj.status = { active: [{ name: 'nightly-1' }], lastScheduleTime: '2024-05-01T11:59:00Z' };
    expect(cells('cronjobs', cj).slice(4, 6)).toEqual([1, '60s']);
  });

  it('checks the schedule, time zone, name length and job template', () => {
    const bad = (spec: object, name = 'nightly') => admit('cronjobs', { metadata: { name, namespace: 'default' }, spec: { ...cronBody.spec, ...spec } }).causes;
    expect(bad({ schedule: '* * *' })).toEqual(['spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]']);
    expect(bad({ schedule: '61 * * * *' })).toEqual(['spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61']);
    expect(bad({ schedule: '@fortnightly' })).toEqual(['spec.schedule: Invalid value: "@fortnightly": unrecognized descriptor: @fortnightly']);
    expect(bad({ schedule: 'TZ=UTC 0 3 * * *' })).toEqual([
      'spec.schedule: Invalid value: "TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    ]);
    expect(bad({ timeZone: 'Mars/Olympus' })).toEqual(['spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']);
    expect(bad({ timeZone: 'Europe/Berlin', schedule: '@hourly' })).toEqual([]);
    expect(bad({}, 'x'.repeat(53))).toEqual([`metadata.name: Invalid value: "${'x'.repeat(53)}": must be no more than 52 characters`]);
    expect(bad({ jobTemplate: { spec: { selector: { matchLabels: { a: 'b' } }, template: podTemplate('Never') } } })).toEqual([
      'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
    ]);
  });
});
