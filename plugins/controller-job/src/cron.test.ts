import { describe, expect, it } from 'vitest';
import { CronError, formatInZone, parseSchedule, wallTime } from './cron.js';

const at = (iso: string) => Date.parse(iso);
const iso = (time: number | undefined) => (time === undefined ? undefined : new Date(time).toISOString());
const next = (schedule: string, after: string, zone = 'UTC') => iso(parseSchedule(schedule, zone).next(at(after)));

describe('parseSchedule: next', () => {
  it('steps, ranges, lists and names in the five fields', () => {
    expect(next('*/15 * * * *', '2024-05-06T10:07:30Z')).toBe('2024-05-06T10:15:00.000Z');
    expect(next('*/15 * * * *', '2024-05-06T10:15:00Z')).toBe('2024-05-06T10:30:00.000Z');
    expect(next('5-10/2 * * * *', '2024-05-06T10:07:00Z')).toBe('2024-05-06T10:09:00.000Z');
    expect(next('0 9 * * 1-5', '2024-05-10T10:00:00Z')).toBe('2024-05-13T09:00:00.000Z'); // Friday → Monday
    expect(next('0 12 * jan,JUN mon-fri', '2024-01-31T13:00:00Z')).toBe('2024-06-03T12:00:00.000Z');
    expect(next('30 23 31 * *', '2024-04-01T00:00:00Z')).toBe('2024-05-31T23:30:00.000Z'); // April has no 31st
    expect(next('0 0 29 2 *', '2024-03-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
  });

  it('matches either day field when both are restricted, both when one is a star', () => {
    // The 13th, or any Friday.
    expect(next('0 0 13 * 5', '2024-09-07T00:00:00Z')).toBe('2024-09-13T00:00:00.000Z'); // a Friday the 13th
    expect(next('0 0 13 * 5', '2024-09-14T00:00:00Z')).toBe('2024-09-20T00:00:00.000Z');
    expect(next('0 0 13 * 5', '2024-10-05T00:00:00Z')).toBe('2024-10-11T00:00:00.000Z');
    // `*/1` still counts as a star, so only Mondays; `*/2` does not, so odd days or Mondays.
    expect(next('0 0 */1 * 1', '2024-09-03T00:00:00Z')).toBe('2024-09-09T00:00:00.000Z');
    expect(next('0 0 */2 * 1', '2024-09-03T12:00:00Z')).toBe('2024-09-05T00:00:00.000Z');
  });

  it('expands the descriptors', () => {
    expect(next('@hourly', '2024-05-06T10:07:00Z')).toBe('2024-05-06T11:00:00.000Z');
    expect(next('@daily', '2024-05-06T10:07:00Z')).toBe('2024-05-07T00:00:00.000Z');
    expect(next('@midnight', '2024-05-06T10:07:00Z')).toBe('2024-05-07T00:00:00.000Z');
    expect(next('@weekly', '2024-05-06T10:07:00Z')).toBe('2024-05-12T00:00:00.000Z');
    expect(next('@monthly', '2024-05-06T10:07:00Z')).toBe('2024-06-01T00:00:00.000Z');
    expect(next('@yearly', '2024-05-06T10:07:00Z')).toBe('2025-01-01T00:00:00.000Z');
    expect(next('@annually', '2024-05-06T10:07:00Z')).toBe('2025-01-01T00:00:00.000Z');
    expect(next('@every 90m', '2024-05-06T10:07:12.500Z')).toBe('2024-05-06T11:37:12.000Z');
  });

  it('reads wall-clock times in the time zone, from the argument or a CRON_TZ prefix', () => {
    expect(next('0 9 * * *', '2024-01-15T00:00:00Z', 'Europe/Berlin')).toBe('2024-01-15T08:00:00.000Z');
    expect(next('0 9 * * *', '2024-07-15T00:00:00Z', 'Europe/Berlin')).toBe('2024-07-15T07:00:00.000Z');
    expect(next('CRON_TZ=America/New_York 0 9 * * *', '2024-07-15T00:00:00Z', 'Europe/Berlin')).toBe('2024-07-15T13:00:00.000Z');
    expect(next('TZ=Asia/Kolkata 30 9 * * *', '2024-07-15T00:00:00Z')).toBe('2024-07-15T04:00:00.000Z');
    expect(parseSchedule('TZ=Asia/Tokyo @daily', 'UTC').timeZone).toBe('Asia/Tokyo');
  });

  it('skips wall-clock times a spring-forward removes and runs a repeated one once', () => {
    // 2024-03-10 02:00–03:00 does not exist in New York.
    expect(next('30 2 * * *', '2024-03-10T05:00:00Z', 'America/New_York')).toBe('2024-03-11T06:30:00.000Z');
    // 2024-11-03 01:30 happens at 05:30Z (EDT) and 06:30Z (EST): once, the first time.
    expect(next('30 1 * * *', '2024-11-03T04:00:00Z', 'America/New_York')).toBe('2024-11-03T05:30:00.000Z');
    expect(next('30 1 * * *', '2024-11-03T05:30:00Z', 'America/New_York')).toBe('2024-11-04T06:30:00.000Z');
    expect(next('0 * * * *', '2024-11-03T05:00:00Z', 'America/New_York')).toBe('2024-11-03T07:00:00.000Z');
  });

  it('gives up on schedules that never come', () => {
    expect(parseSchedule('0 0 30 2 *', 'UTC').next(at('2024-01-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('parseSchedule: latest', () => {
  it('finds the latest time in the interval and counts the times in it', () => {
    const schedule = parseSchedule('*/10 * * * *', 'UTC');
    expect(schedule.latest(at('2024-05-06T10:00:00Z'), at('2024-05-06T10:35:00Z'), 100)).toEqual({ time: at('2024-05-06T10:30:00Z'), count: 3 });
    expect(schedule.latest(at('2024-05-06T10:00:00Z'), at('2024-05-06T10:09:59Z'), 100)).toBeUndefined();
    // The start of the interval is excluded, its end included.
    expect(schedule.latest(at('2024-05-06T10:00:00Z'), at('2024-05-06T10:10:00Z'), 100)).toEqual({ time: at('2024-05-06T10:10:00Z'), count: 1 });
  });

  it('stops counting past the limit', () => {
    const latest = parseSchedule('* * * * *', 'UTC').latest(at('2024-01-01T00:00:00Z'), at('2024-06-01T00:00:00Z'), 100);
    expect(latest).toEqual({ time: at('2024-06-01T00:00:00Z'), count: 101 });
  });

  it('works in a zone and for @every', () => {
    expect(parseSchedule('0 9 * * *', 'Europe/Berlin').latest(at('2024-07-01T00:00:00Z'), at('2024-07-03T12:00:00Z'), 100)).toEqual({
      time: at('2024-07-03T07:00:00Z'),
      count: 3,
    });
    expect(parseSchedule('@every 1h', 'UTC').latest(at('2024-07-01T00:00:00Z'), at('2024-07-01T05:30:00Z'), 100)).toEqual({
      time: at('2024-07-01T05:00:00Z'),
      count: 5,
    });
  });
});

describe('parseSchedule: errors', () => {
  it('refuses what the grammar refuses, and an unknown time zone to run in', () => {
    expect(() => parseSchedule('@fortnightly', 'UTC')).toThrow(new CronError('unrecognized descriptor: @fortnightly'));
    expect(() => parseSchedule('0 * * * *', 'Mars/Olympus')).toThrow(new CronError('provided bad location Mars/Olympus: unknown time zone Mars/Olympus'));
  });
});

describe('time zones', () => {
  it('formats RFC 3339 with the offset, Z when it is zero', () => {
    expect(formatInZone(at('2024-07-15T07:00:00Z'), 'Europe/Berlin')).toBe('2024-07-15T09:00:00+02:00');
    expect(formatInZone(at('2024-07-15T07:00:00Z'), 'America/St_Johns')).toBe('2024-07-15T04:30:00-02:30');
    expect(formatInZone(at('2024-07-15T07:00:00.900Z'), 'UTC')).toBe('2024-07-15T07:00:00Z');
  });

  it('reads wall-clock times', () => {
    expect(iso(wallTime(at('2024-01-15T23:30:00Z'), 'Asia/Tokyo'))).toBe('2024-01-16T08:30:00.000Z');
  });
});
