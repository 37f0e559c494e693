import type { CronJob, CronJobSpec, Job } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { decideSchedule, jobFromTemplate, jobNameFor, jobsBeyondHistory, rfc1123z } from './cronjob-sync.js';

const at = (iso: string) => Date.parse(iso);

function cronJob(spec: Partial<CronJobSpec> = {}, status: CronJob['status'] = {}): CronJob {
  return {
    metadata: { name: 'report', namespace: 'default', uid: 'cj-uid', creationTimestamp: '2024-05-06T09:00:30Z' },
    spec: {
      schedule: '0 * * * *',
      concurrencyPolicy: 'Allow',
      jobTemplate: { metadata: { labels: { app: 'report' }, annotations: { team: 'data' } }, spec: { template: { spec: { containers: [] } } } },
      ...spec,
    },
    status,
  };
}

function finishedJob(name: string, type: 'Complete' | 'Failed', startTime?: string): Job {
  return {
    metadata: { name },
    spec: { template: { spec: { containers: [] } } },
    status: { ...(startTime ? { startTime } : {}), conditions: [{ type, status: 'True' }] },
  };
}

describe('decideSchedule', () => {
  it('waits for the first time after creation, then starts the latest due time', () => {
    expect(decideSchedule(cronJob(), at('2024-05-06T09:30:00Z'), 'UTC')).toEqual({ kind: 'wait', nextTime: at('2024-05-06T10:00:00Z') });
    expect(decideSchedule(cronJob(), at('2024-05-06T12:10:00Z'), 'UTC')).toEqual({
      kind: 'start',
      time: at('2024-05-06T12:00:00Z'),
      missed: 3,
      nextTime: at('2024-05-06T13:00:00Z'),
    });
    // After the last scheduled time nothing is due until the next one.
    const scheduled = cronJob({}, { lastScheduleTime: '2024-05-06T12:00:00Z' });
    expect(decideSchedule(scheduled, at('2024-05-06T12:10:00Z'), 'UTC').kind).toBe('wait');
  });

  it('looks back no further than startingDeadlineSeconds', () => {
    expect(decideSchedule(cronJob({ startingDeadlineSeconds: 300 }), at('2024-05-06T12:10:00Z'), 'UTC').kind).toBe('wait');
    expect(decideSchedule(cronJob({ startingDeadlineSeconds: 900 }), at('2024-05-06T12:10:00Z'), 'UTC')).toMatchObject({
      kind: 'start',
      time: at('2024-05-06T12:00:00Z'),
      missed: 1,
    });
  });

  it('reads the schedule in the CronJob time zone, or the default one', () => {
    const berlin = cronJob({ schedule: '0 9 * * *', timeZone: 'Europe/Berlin' });
    expect(decideSchedule(berlin, at('2024-05-07T07:30:00Z'), 'UTC')).toMatchObject({ kind: 'start', time: at('2024-05-07T07:00:00Z') });
    expect(decideSchedule(cronJob({ schedule: '0 9 * * *' }), at('2024-05-07T07:30:00Z'), 'Europe/Berlin')).toMatchObject({ kind: 'start' });
    expect(decideSchedule(cronJob({ schedule: '0 9 * * *' }), at('2024-05-07T07:30:00Z'), 'UTC').kind).toBe('wait');
  });

  it('reports schedules and time zones it cannot use', () => {
    expect(decideSchedule(cronJob({ schedule: '61 * * * *' }), at('2024-05-06T12:10:00Z'), 'UTC')).toEqual({
      kind: 'invalid',
      reason: 'InvalidSchedule',
      message: 'invalid schedule: 61 * * * * : end of range (61) above maximum (59): 61',
    });
    expect(decideSchedule(cronJob({ timeZone: 'Mars/Olympus' }), at('2024-05-06T12:10:00Z'), 'UTC')).toMatchObject({
      kind: 'invalid',
      reason: 'UnknownTimeZone',
    });
  });
});

describe('jobFromTemplate', () => {
  it('names the Job after the scheduled minute and annotates the time in the CronJob zone', () => {
    const time = at('2024-05-06T07:00:00Z');
    const job = jobFromTemplate(cronJob({ timeZone: 'Europe/Berlin' }), time, 'UTC');
    expect(job.metadata).toEqual({
      name: `report-${time / 60_000}`,
      namespace: 'default',
      labels: { app: 'report' },
      annotations: { team: 'data', 'batch.kubernetes.io/cronjob-scheduled-timestamp': '2024-05-06T09:00:00+02:00' },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'report', uid: 'cj-uid', controller: true, blockOwnerDeletion: true }],
    });
    expect(jobNameFor(cronJob(), time)).toBe('report-28582980');
  });
});

describe('jobsBeyondHistory', () => {
  it('keeps the newest finished Jobs of each kind, by start time', () => {
    const jobs = [
      finishedJob('ok-3', 'Complete', '2024-05-06T03:00:00Z'),
      finishedJob('ok-1', 'Complete', '2024-05-06T01:00:00Z'),
      finishedJob('ok-2', 'Complete', '2024-05-06T02:00:00Z'),
      finishedJob('bad-1', 'Failed', '2024-05-06T01:30:00Z'),
      finishedJob('bad-2', 'Failed'),
    ];
    const limited = cronJob({ successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 });
    expect(jobsBeyondHistory(limited, jobs).map((job) => job.metadata.name)).toEqual(['ok-1', 'ok-2', 'bad-1']);
    expect(jobsBeyondHistory(cronJob({ successfulJobsHistoryLimit: 0 }), jobs).map((job) => job.metadata.name)).toEqual(['ok-1', 'ok-2', 'ok-3']);
  });
});

it('formats MissSchedule times as Go prints RFC 1123 with a numeric zone', () => {
  expect(rfc1123z(at('2024-05-06T07:05:09Z'))).toBe('Mon, 06 May 2024 07:05:09 +0000');
});
