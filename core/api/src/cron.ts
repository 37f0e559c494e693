/**
 * The cron grammar of a CronJob's `spec.schedule`, as Kubernetes reads it (robfig/cron's standard parser):
 * five fields (minute, hour, day of month, month, day of week) with `*`, `?`, lists, ranges, steps and
 * month / weekday names; the descriptors `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily`
 * (`@midnight`), `@hourly` and `@every <Go duration>`; and a `CRON_TZ=<zone>` (or `TZ=<zone>`) prefix. The
 * API server validates schedules with it and the CronJob controller computes their times from what it reads;
 * the messages are upstream's.
 */

export class CronError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CronError';
  }
}

/** The values one field allows, and whether it counts as unrestricted (`*` or `?` without a step above 1). */
export interface CronField {
  values: ReadonlySet<number>;
  star: boolean;
}

/** A schedule as read: `everyMs` for `@every`, otherwise the five fields (descriptors expanded). */
export type ParsedCron = { timeZone?: string } & (
  | { everyMs: number }
  | { minutes: CronField; hours: CronField; daysOfMonth: CronField; months: CronField; daysOfWeek: CronField }
);

interface FieldBounds {
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly FieldBounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] },
  { min: 0, max: 6, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

const DESCRIPTORS = new Map([
  ['@yearly', '0 0 1 1 *'],
  ['@annually', '0 0 1 1 *'],
  ['@monthly', '0 0 1 * *'],
  ['@weekly', '0 0 * * 0'],
  ['@daily', '0 0 * * *'],
  ['@midnight', '0 0 * * *'],
  ['@hourly', '0 * * * *'],
]);

const DURATION_UNITS_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;
const DURATION_PART = /(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g;

/** Whether the runtime knows an IANA time zone name. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** strconv.Atoi, then robfig's refusal of negative numbers. */
function parseNumber(text: string, expression: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw new CronError(`failed to parse int from ${text}: strconv.Atoi: parsing "${text}": invalid syntax`);
  const value = Number(text);
  if (value < 0) throw new CronError(`negative number (${value}) not allowed: ${expression}`);
  return value;
}

/** One comma-separated part of a field: `*`, `?`, `n`, `a-b`, each optionally `/step`; names for months and weekdays. */
function parseRange(expression: string, field: FieldBounds, values: Set<number>): boolean {
  const [range = '', step, ...extraSlashes] = expression.split('/');
  if (extraSlashes.length > 0) throw new CronError(`too many slashes: ${expression}`);
  const bounds = range.split('-');
  let start: number;
  let end: number;
  let star = false;
  if (range === '*' || range === '?') {
    start = field.min;
    end = field.max;
    star = true;
  } else {
    if (bounds.length > 2) throw new CronError(`too many hyphens: ${expression}`);
    const [low, high] = bounds.map((bound) => {
      const named = field.names?.indexOf(bound.toLowerCase()) ?? -1;
      return named >= 0 ? named + field.min : parseNumber(bound, expression);
    }) as [number, number | undefined];
    start = low;
    end = high ?? start;
  }
  let stepValue = 1;
  if (step !== undefined) {
    stepValue = parseNumber(step, expression);
    // `n/step` means `n-max/step`.
    if (bounds.length === 1 && !star) end = field.max;
    if (stepValue === 0) throw new CronError(`step of range should be a positive number: ${expression}`);
    if (stepValue > 1) star = false;
  }
  if (start < field.min) throw new CronError(`beginning of range (${start}) below minimum (${field.min}): ${expression}`);
  if (end > field.max) throw new CronError(`end of range (${end}) above maximum (${field.max}): ${expression}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expression}`);
  for (let value = start; value <= end; value += stepValue) values.add(value);
  return star;
}

function parseField(text: string, field: FieldBounds): CronField {
  const values = new Set<number>();
  let star = false;
  for (const part of text.split(',')) star = parseRange(part, field, values) || star;
  return { values, star };
}

/** A Go duration ("1h30m", "90s", "1.5h") in milliseconds, or undefined where time.ParseDuration fails. */
function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, , unit] of text.matchAll(DURATION_PART)) total += Number(amount) * DURATION_UNITS_MS[unit!]!;
  return total;
}

/** Reads a schedule; throws a CronError with upstream's message for one that does not parse. */
export function parseCron(schedule: string): ParsedCron {
  let spec = schedule;
  let timeZone: string | undefined;
  if (spec.length === 0) throw new CronError('empty spec string');
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const zone = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space);
    if (!isKnownTimeZone(zone)) throw new CronError(`provided bad location ${zone}: unknown time zone ${zone}`);
    timeZone = zone;
    spec = space < 0 ? '' : spec.slice(space).trim();
  }
  const zoned = timeZone === undefined ? {} : { timeZone };
  if (spec.startsWith('@')) {
    const expanded = DESCRIPTORS.get(spec);
    if (expanded === undefined) {
      if (!spec.startsWith('@every ')) throw new CronError(`unrecognized descriptor: ${spec}`);
      const duration = spec.slice('@every '.length);
      const everyMs = parseDuration(duration);
      if (everyMs === undefined) throw new CronError(`failed to parse duration ${spec}: time: invalid duration "${duration}"`);
      return { ...{}, ...zoned, everyMs };
    }
    spec = expanded;
  }
  const fields = spec.split(/\s+/).filter(Boolean);
  if (fields.length !== FIELDS.length) throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = fields.map((text, i) => parseField(text, FIELDS[i]!)) as [
    CronField,
    CronField,
    CronField,
    CronField,
    CronField,
  ];
  return { ...{}, ...zoned, minutes, hours, daysOfMonth, months, daysOfWeek };
}

/** Why a schedule does not parse (upstream's message), or undefined when it does. */
export function cronScheduleError(schedule: string): string | undefined {
  try {
    parseCron(schedule);
    return undefined;
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
}
