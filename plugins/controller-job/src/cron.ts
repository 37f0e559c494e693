/**
 * Standard cron schedules, as CronJobs read them: five fields (minute, hour, day of month, month, day of
 * week) with `*`, `?`, lists, ranges, steps and month / weekday names; the descriptors `@yearly`
 * (`@annually`), `@monthly`, `@weekly`, `@daily` (`@midnight`), `@hourly` and `@every <duration>`; and a
 * `CRON_TZ=<zone>` (or `TZ=<zone>`) prefix. Times are wall-clock times in the schedule's time zone.
 *
 * Day of month and day of week: when either field starts with `*` or `?` (and has no step above 1), a day
 * must match both; when both are restricted, matching either is enough.
 *
 * Daylight saving time: a wall-clock time that does not exist (skipped by a spring-forward) does not run;
 * a wall-clock time that happens twice (a fall-back) runs once, the first time.
 */

export class CronError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CronError';
  }
}

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

interface Field {
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly Field[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] },
  { min: 0, max: 6, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const SEARCH_YEARS = 5;

function parseNumber(text: string, field: Field, expression: string): number {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + field.min;
  if (!/^\d+$/.test(text)) throw new CronError(`failed to parse int from ${text}: ${expression}`);
  return Number(text);
}

/** The values one field allows, and whether it counts as unrestricted (`*` or `?`) for the day rule. */
function parseField(text: string, field: Field): { values: Set<number>; star: boolean } {
  const values = new Set<number>();
  let star = false;
  for (const expression of text.split(',')) {
    const [range = '', stepText, ...rest] = expression.split('/');
    if (rest.length > 0) throw new CronError(`too many slashes: ${expression}`);
    let start: number;
    let end: number;
    let isStar = false;
    if (range === '*' || range === '?') {
      start = field.min;
      end = field.max;
      isStar = true;
    } else {
      const bounds = range.split('-');
      if (bounds.length > 2) throw new CronError(`too many hyphens: ${expression}`);
      start = parseNumber(bounds[0]!, field, expression);
      end = bounds.length === 2 ? parseNumber(bounds[1]!, field, expression) : start;
      if (bounds.length === 1 && stepText !== undefined) end = field.max;
    }
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText)) throw new CronError(`failed to parse int from ${stepText}: ${expression}`);
      step = Number(stepText);
      if (step === 0) throw new CronError(`step of range should be a positive number: ${expression}`);
      if (step > 1) isStar = false;
    }
    if (start < field.min) throw new CronError(`beginning of range (${start}) below minimum (${field.min}): ${expression}`);
    if (end > field.max) throw new CronError(`end of range (${end}) above maximum (${field.max}): ${expression}`);
    if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expression}`);
    for (let value = start; value <= end; value += step) values.add(value);
    star ||= isStar;
  }
  return { values, star };
}

/** A Go duration ("1h30m", "90s", "1.5h"), in milliseconds. */
function parseDuration(text: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: MINUTE, h: 60 * MINUTE };
  if (!/^(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))*$/.test(text))
    throw new CronError(`failed to parse duration @every ${text}: time: invalid duration "${text}"`);
  let total = 0;
  for (const [, amount, , unit] of text.matchAll(/(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += Number(amount) * units[unit!]!;
  return total;
}

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

/** Whether the runtime knows an IANA time zone name. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
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
    private readonly minutes: Set<number>,
    private readonly hours: Set<number>,
    private readonly daysOfMonth: { values: Set<number>; star: boolean },
    private readonly months: Set<number>,
    private readonly daysOfWeek: { values: Set<number>; star: boolean },
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

/** Parses a schedule; its times are in `CRON_TZ=`/`TZ=` of the schedule if given, else in `timeZone`. */
export function parseSchedule(schedule: string, timeZone: string): CronSchedule {
  let spec = schedule.trim();
  let zone = timeZone;
  if (spec === '') throw new CronError('empty spec string');
  const prefix = /^(?:CRON_)?TZ=(\S*)\s*(.*)$/.exec(spec);
  if (prefix) {
    zone = prefix[1]!;
    spec = prefix[2]!.trim();
  }
  if (!isKnownTimeZone(zone)) throw new CronError(`provided bad location ${zone}: unknown time zone ${zone}`);
  if (spec.startsWith('@every ')) {
    const delay = parseDuration(spec.slice('@every '.length).trim());
    return new EverySchedule(zone, Math.max(1000, Math.floor(delay / 1000) * 1000));
  }
  if (spec.startsWith('@')) {
    const expanded = DESCRIPTORS[spec];
    if (!expanded) throw new CronError(`unrecognized descriptor: ${spec}`);
    spec = expanded;
  }
  const fields = spec.split(/\s+/).filter(Boolean);
  if (fields.length !== FIELDS.length) throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [minutes, hours, dom, months, dow] = fields.map((text, i) => parseField(text, FIELDS[i]!)) as [
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
  ];
  return new FieldSchedule(zone, minutes.values, hours.values, dom, months.values, dow);
}
