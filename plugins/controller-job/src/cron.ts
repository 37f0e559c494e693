/**
 * When a CronJob's schedule runs. The grammar (fields, descriptors, `@every`, a `CRON_TZ=` prefix) is
 * @skiff/api's `parseCron`, which the API server validates with; this computes the activation times. Times
 * are wall-clock times in the schedule's time zone.
 *
 * Day of month and day of week: when either field starts with `*` or `?` (and has no step above 1), a day
 * must match both; when both are restricted, matching either is enough.
 *
 * Daylight saving time: a wall-clock time that does not exist (skipped by a spring-forward) does not run;
 * a wall-clock time that happens twice (a fall-back) runs once, the first time.
 */
import { CronError, isKnownTimeZone, parseCron, type CronField } from '@skiff/api';

export { CronError };

export interface CronSchedule {
  /** The time zone the schedule's wall-clock times are in. */
  readonly timeZone: string;
  /** The first activation strictly after `after` (ms since the epoch), if one comes within five years. */
  next(after: number): number | undefined;
  /**
   * The latest activation in (`after`, `atOrBefore`], and how many activations that interval holds (counted
   * up to `countLimit` + 1, so "more than the limit" can be told).
   */
  latest(after: number, atOrBefore: number, countLimit: number): { time: number; count: number } | undefined;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const SEARCH_YEARS = 5;

// ---- wall-clock time in a zone -------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, format);
  }
  return format;
}

/** The wall-clock time of an instant in a zone, as milliseconds of a UTC date with the same fields. */
export function wallTime(instant: number, zone: string): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return instant;
  const parts: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(new Date(instant))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const whole = Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute, parts.second);
  return whole + (((instant % 1000) + 1000) % 1000);
}

/** The instants (earliest first) at which a zone's clocks show `wall`: none in a gap, two in an overlap. */
function instantsAt(wall: number, zone: string): number[] {
  if (zone === 'UTC' || zone === 'Etc/UTC') return [wall];
  const candidates = new Set([wall - (wallTime(wall - DAY, zone) - (wall - DAY)), wall - (wallTime(wall + DAY, zone) - (wall + DAY))]);
  return [...candidates].filter((instant) => wallTime(instant, zone) === wall).sort((a, b) => a - b);
}

/** RFC 3339 with the zone's offset at that instant ("Z" when it is zero), as Go formats time.RFC3339. */
export function formatInZone(instant: number, zone: string): string {
  const seconds = Math.floor(instant / 1000) * 1000;
  const wall = wallTime(seconds, zone);
  const offsetMinutes = Math.round((wall - seconds) / MINUTE);
  const text = new Date(wall).toISOString().replace(/\.\d+Z$/, '');
  if (offsetMinutes === 0) return `${text}Z`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${text}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

// ---- schedules -----------------------------------------------------------------------------------------

class FieldSchedule implements CronSchedule {
  constructor(
    readonly timeZone: string,
    private readonly minutes: ReadonlySet<number>,
    private readonly hours: ReadonlySet<number>,
    private readonly daysOfMonth: CronField,
    private readonly months: ReadonlySet<number>,
    private readonly daysOfWeek: CronField,
  ) {}

  private dayMatches(date: Date): boolean {
    const dom = this.daysOfMonth.values.has(date.getUTCDate());
    const dow = this.daysOfWeek.values.has(date.getUTCDay());
    return this.daysOfMonth.star || this.daysOfWeek.star ? dom && dow : dom || dow;
  }

  /** The first matching wall-clock minute at or after `wall`. */
  private nextWall(wall: number): number | undefined {
    const limit = wall + SEARCH_YEARS * 366 * DAY;
    let t = wall;
    while (t <= limit) {
      const d = new Date(t);
      const [y, mo, day, h] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()];
      if (!this.months.has(mo + 1)) t = Date.UTC(y, mo + 1, 1);
      else if (!this.dayMatches(d)) t = Date.UTC(y, mo, day + 1);
      else if (!this.hours.has(h)) t = Date.UTC(y, mo, day, h + 1);
      else if (!this.minutes.has(d.getUTCMinutes())) t += MINUTE;
      else return t;
    }
    return undefined;
  }

  /** The last matching wall-clock minute at or before `wall`. */
  private previousWall(wall: number): number | undefined {
    const limit = wall - SEARCH_YEARS * 366 * DAY;
    let t = wall;
    while (t >= limit) {
      const d = new Date(t);
      const [y, mo, day, h] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()];
      if (!this.months.has(mo + 1)) t = Date.UTC(y, mo, 1) - MINUTE;
      else if (!this.dayMatches(d)) t = Date.UTC(y, mo, day) - MINUTE;
      else if (!this.hours.has(h)) t = Date.UTC(y, mo, day, h) - MINUTE;
      else if (!this.minutes.has(d.getUTCMinutes())) t -= MINUTE;
      else return t;
    }
    return undefined;
  }

  next(after: number): number | undefined {
    const limit = after + SEARCH_YEARS * 366 * DAY;
    let wall = Math.floor(wallTime(after, this.timeZone) / MINUTE) * MINUTE + MINUTE;
    for (;;) {
      const candidate = this.nextWall(wall);
      if (candidate === undefined) return undefined;
      const instant = instantsAt(candidate, this.timeZone).find((time) => time > after);
      if (instant !== undefined) return instant;
      wall = candidate + MINUTE;
      if (wall > limit + DAY) return undefined;
    }
  }

  private previous(atOrBefore: number): number | undefined {
    const limit = atOrBefore - SEARCH_YEARS * 366 * DAY;
    let wall = Math.floor(wallTime(atOrBefore, this.timeZone) / MINUTE) * MINUTE;
    for (;;) {
      const candidate = this.previousWall(wall);
      if (candidate === undefined) return undefined;
      const first = instantsAt(candidate, this.timeZone)[0];
      if (first !== undefined && first <= atOrBefore) return first;
      wall = candidate - MINUTE;
      if (wall < limit - DAY) return undefined;
    }
  }

  latest(after: number, atOrBefore: number, countLimit: number): { time: number; count: number } | undefined {
    const time = this.previous(atOrBefore);
    if (time === undefined || time <= after) return undefined;
    let count = 0;
    for (let t = this.next(after); t !== undefined && t <= atOrBefore && count <= countLimit; t = this.next(t)) count += 1;
    return { time, count };
  }
}

/** `@every <duration>`: runs each `delay` (whole seconds, at least one) after the previous run. */
class EverySchedule implements CronSchedule {
  constructor(
    readonly timeZone: string,
    private readonly delayMs: number,
  ) {}

  next(after: number): number {
    return Math.floor(after / 1000) * 1000 + this.delayMs;
  }

  latest(after: number, atOrBefore: number): { time: number; count: number } | undefined {
    const first = this.next(after);
    if (first > atOrBefore) return undefined;
    const steps = Math.floor((atOrBefore - first) / this.delayMs);
    return { time: first + steps * this.delayMs, count: steps + 1 };
  }
}

/** Reads a schedule; its times are in its `CRON_TZ=`/`TZ=` zone if it names one, else in `timeZone`. */
export function parseSchedule(schedule: string, timeZone: string): CronSchedule {
  const parsed = parseCron(schedule);
  const zone = parsed.timeZone ?? timeZone;
  if (!isKnownTimeZone(zone)) throw new CronError(`provided bad location ${zone}: unknown time zone ${zone}`);
  if ('everyMs' in parsed) return new EverySchedule(zone, Math.max(1000, Math.floor(parsed.everyMs / 1000) * 1000));
  return new FieldSchedule(zone, parsed.minutes.values, parsed.hours.values, parsed.daysOfMonth, parsed.months.values, parsed.daysOfWeek);
}
