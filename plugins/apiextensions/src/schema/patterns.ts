// Limits on a CRD's `pattern`s, so that compiling them stays well under a second (docs/custom-resources.md):
// @bufbuild/re2 compiles long literals in quadratic time and expands repetitions, so each pattern is held
// to a length and an estimated compile cost, and all of a CRD's patterns together to a total of each.
// An update is held to them only where it makes things worse: a version whose schema it leaves as stored
// keeps its patterns, and the totals may stay over as long as they do not grow.
import type { StatusCause } from '@skiff/api';
import { forbidden, tooLong } from './causes.js';
import { patternCost, UNICODE_CLASS_COST } from './regex.js';
import type { JSONSchemaProps } from './types.js';

/** Bytes one pattern may have (as CEL `matches` allows): a literal this long compiles in ~40 ms. */
export const MAX_PATTERN_BYTES = 4096;
/** Estimated compile cost (patternCost) one pattern may have: ~40 ms at most. */
export const MAX_PATTERN_COST = 16_384;
/** Bytes all patterns of a CRD may have together (Gateway API's HTTPRoute, the largest we know of, has 6,148). */
export const MAX_CRD_PATTERN_BYTES = 32_768;
/** Estimated compile cost all patterns of a CRD may have together (HTTPRoute's: 2,632). */
export const MAX_CRD_PATTERN_COST = 65_536;

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

/** Calls `visit` with every pattern of a schema that is compiled (not under definitions or dependencies) and its path. */
export function forEachPattern(s: JSONSchemaProps, path: string, visit: (pattern: string, path: string) => void): void {
  if (s.pattern) visit(s.pattern, `${path}.pattern`);
  for (const [name, sub] of Object.entries(s.properties ?? {})) forEachPattern(sub, `${path}.properties[${name}]`, visit);
  if (typeof s.additionalProperties === 'object') forEachPattern(s.additionalProperties, `${path}.additionalProperties`, visit);
  if (Array.isArray(s.items)) s.items.forEach((sub, i) => forEachPattern(sub, `${path}.items[${i}]`, visit));
  else if (s.items) forEachPattern(s.items, `${path}.items`, visit);
  for (const junctor of ['allOf', 'anyOf', 'oneOf'] as const) s[junctor]?.forEach((sub, i) => forEachPattern(sub, `${path}.${junctor}[${i}]`, visit));
  if (s.not) forEachPattern(s.not, `${path}.not`, visit);
}

/** The refusal of a pattern over the per-pattern limits (`field` is its path), undefined when it is within them. */
export function patternLimitCause(pattern: string, field: string): StatusCause | undefined {
  if (byteLength(pattern) > MAX_PATTERN_BYTES) return tooLong(field, MAX_PATTERN_BYTES);
  const cost = patternCost(pattern);
  if (cost > MAX_PATTERN_COST) {
    return forbidden(
      field,
      `compiles to about ${cost} instructions, more than the ${MAX_PATTERN_COST} a pattern may (each copy a repetition makes counts, and ${UNICODE_CLASS_COST} for each Unicode class)`,
    );
  }
  return undefined;
}

/** The bytes and estimated compile cost of patterns together. */
export interface PatternTotals {
  bytes: number;
  cost: number;
}

/**
 * The totals of the patterns of some schemas within the per-pattern limits: one over them has its own
 * refusal and is never compiled while checking, so it does not count here.
 */
export function patternTotals(schemas: readonly (JSONSchemaProps | undefined)[]): PatternTotals {
  const totals = { bytes: 0, cost: 0 };
  for (const schema of schemas) {
    if (!schema) continue;
    forEachPattern(schema, '', (pattern) => {
      const bytes = byteLength(pattern);
      const cost = bytes <= MAX_PATTERN_BYTES ? patternCost(pattern) : 0;
      if (bytes > MAX_PATTERN_BYTES || cost > MAX_PATTERN_COST) return;
      totals.bytes += bytes;
      totals.cost += cost;
    });
  }
  return totals;
}

/** Whether the patterns of a CRD are within the limits on their totals. */
export function withinPatternTotals(totals: PatternTotals): boolean {
  return totals.bytes <= MAX_CRD_PATTERN_BYTES && totals.cost <= MAX_CRD_PATTERN_COST;
}

/**
 * Refusals of a CRD whose patterns together are over the limits (`field` names its versions); on update
 * (`old` the totals as stored), only a total the update makes larger is refused.
 */
export function checkPatternTotals(totals: PatternTotals, old: PatternTotals | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (totals.bytes > MAX_CRD_PATTERN_BYTES && totals.bytes > (old?.bytes ?? 0)) {
    causes.push(forbidden(field, `the patterns of all versions' schemas have ${totals.bytes} bytes together, more than the ${MAX_CRD_PATTERN_BYTES} allowed`));
  }
  if (totals.cost > MAX_CRD_PATTERN_COST && totals.cost > (old?.cost ?? 0)) {
    causes.push(
      forbidden(
        field,
        `the patterns of all versions' schemas compile to about ${totals.cost} instructions together, more than the ${MAX_CRD_PATTERN_COST} allowed`,
      ),
    );
  }
  return causes;
}
