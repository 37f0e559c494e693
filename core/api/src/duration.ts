// Durations the way kubectl prints them (k8s.io/apimachinery/pkg/util/duration): the AGE column of every
// table, event ages in `describe`. Both functions keep ~2 significant figures and only ever truncate.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Rounds toward zero to whole seconds and answers for clock skew: a duration just below zero (more than
 * -2 s) reads as `0s`, anything further in the future is `<invalid>`.
 */
function skewCheck(ms: number): string | undefined {
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  return undefined;
}

/** Whole `unit`s in `ms`, truncated like Go's integer division of durations. */
function whole(ms: number, unit: number): number {
  return Math.trunc(ms / unit);
}

/** `<big><bigUnit>` plus `<small><smallUnit>` unless the smaller part is zero (`2m3s`, `3h`, `2d3h`). */
function pair(big: number, bigUnit: string, small: number, smallUnit: string): string {
  return small === 0 ? `${big}${bigUnit}` : `${big}${bigUnit}${small}${smallUnit}`;
}

/**
 * kubectl's AGE column: `0s` … `119s`, `2m3s` … `9m59s`, `10m` … `179m`, `3h5m` … `7h59m`, `8h` … `47h`,
 * `2d3h` … `7d23h`, `8d` … `729d`, `2y3d` … `7y364d`, then whole years.
 */
export function humanDuration(ms: number): string {
  const skewed = skewCheck(ms);
  if (skewed !== undefined) return skewed;
  const seconds = whole(ms, SECOND);
  if (seconds < 120) return `${seconds}s`;
  const minutes = whole(ms, MINUTE);
  if (minutes < 10) return pair(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = whole(ms, HOUR);
  if (hours < 8) return pair(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  const days = whole(ms, DAY);
  if (days < 8) return pair(days, 'd', hours % 24, 'h');
  if (days < 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (years < 8) return pair(years, 'y', days % 365, 'd');
  return `${years}y`;
}

/** One unit only (`45s`, `12m`, `5h`, `20d`, `3y`): kubectl's compact form, e.g. for event ages. */
export function shortHumanDuration(ms: number): string {
  const skewed = skewCheck(ms);
  if (skewed !== undefined) return skewed;
  const seconds = whole(ms, SECOND);
  if (seconds < 60) return `${seconds}s`;
  const minutes = whole(ms, MINUTE);
  if (minutes < 60) return `${minutes}m`;
  const hours = whole(ms, HOUR);
  if (hours < 24) return `${hours}h`;
  const days = whole(ms, DAY);
  if (days < 365) return `${days}d`;
  return `${Math.trunc(days / 365)}y`;
}

/**
 * The AGE cell for an RFC 3339 timestamp such as `metadata.creationTimestamp`: `<unknown>` when it is
 * missing or unreadable, as kubectl prints it.
 */
export function humanAge(timestamp: string | null | undefined, now: number = Date.now()): string {
  if (!timestamp) return '<unknown>';
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return '<unknown>';
  return humanDuration(now - at);
}
