import { describe, expect, it } from 'vitest';
import { CronError, cronScheduleError, isKnownTimeZone, parseCron } from './cron.js';

const values = (field: { values: ReadonlySet<number> }) => [...field.values].sort((a, b) => a - b);

describe('parseCron', () => {
  it('reads the five fields: steps, ranges, lists and names', () => {
    const parsed = parseCron('*/15 9-17 1,15 JAN-mar mon-FRI');
    if ('everyMs' in parsed) throw new Error('expected fields');
    expect(values(parsed.minutes)).toEqual([0, 15, 30, 45]);
    expect(values(parsed.hours)).toEqual([9, 10, 11, 12, 13, 14, 15, 16, 17]);
    expect(values(parsed.daysOfMonth)).toEqual([1, 15]);
    expect(values(parsed.months)).toEqual([1, 2, 3]);
    expect(values(parsed.daysOfWeek)).toEqual([1, 2, 3, 4, 5]);
    expect(parsed.timeZone).toBeUndefined();
  });

  it('reads `n/step` as `n-max/step`, and counts `*` or `?` as a star unless stepped above 1', () => {
    const parsed = parseCron('5/20 * */1 ? */2');
    if ('everyMs' in parsed) throw new Error('expected fields');
    expect(values(parsed.minutes)).toEqual([5, 25, 45]);
    expect([parsed.minutes.star, parsed.hours.star, parsed.daysOfMonth.star, parsed.months.star, parsed.daysOfWeek.star]).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
  });

  it('expands the descriptors, reads @every as a Go duration and takes a CRON_TZ= or TZ= zone', () => {
    expect(parseCron('@weekly')).toEqual(parseCron('0 0 * * 0'));
    expect(parseCron('@every 1h30m')).toEqual({ everyMs: 90 * 60_000 });
    expect(parseCron('@every 1.5s')).toEqual({ everyMs: 1500 });
    expect(parseCron('CRON_TZ=Asia/Tokyo @every 90m')).toEqual({ timeZone: 'Asia/Tokyo', everyMs: 90 * 60_000 });
    expect(parseCron('TZ=Europe/Paris 0 1 * * *')).toMatchObject({ timeZone: 'Europe/Paris' });
  });

  it.each([
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['0 0 * * * *', 'expected exactly 5 fields, found 6: [0 0 * * * *]'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['0 0 * * 7', 'end of range (7) above maximum (6): 7'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['5-2 * * * *', 'beginning of range (5) beyond end of range (2): 5-2'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['*/-1 * * * *', 'negative number (-1) not allowed: */-1'],
    ['1/2/3 * * * *', 'too many slashes: 1/2/3'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['@every soon', 'failed to parse duration @every soon: time: invalid duration "soon"'],
    ['@every 1hm', 'failed to parse duration @every 1hm: time: invalid duration "1hm"'],
    ['CRON_TZ=Mars/Olympus 0 * * * *', 'provided bad location Mars/Olympus: unknown time zone Mars/Olympus'],
  ])('refuses %j: %s', (schedule, message) => {
    expect(() => parseCron(schedule)).toThrow(new CronError(message));
    expect(cronScheduleError(schedule)).toBe(message);
  });

  it('accepts the standard cron forms', () => {
    for (const schedule of ['*/15 * * * *', '0 9-17 * * MON-FRI', '5 4 1,15 JAN ?', '@daily', '@every 1h30m', 'TZ=Europe/Paris 0 1 * * *'])
      expect(cronScheduleError(schedule)).toBeUndefined();
  });

  it('knows the IANA time zones the runtime knows', () => {
    expect(isKnownTimeZone('Europe/Berlin')).toBe(true);
    expect(isKnownTimeZone('UTC')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus')).toBe(false);
  });
});
