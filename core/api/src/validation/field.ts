// Field errors as Kubernetes reports them: a cause whose `field` is the JSON path and whose message
// is the error body ("Invalid value: -1: must be greater than or equal to 0"), with bad values
// printed the way Go prints them.
import type { StatusCause } from '../types.js';

/** The cause types Kubernetes uses for field errors (metav1.CauseType). */
export const CAUSE_TYPE = Object.freeze({
  notFound: 'FieldValueNotFound',
  required: 'FieldValueRequired',
  duplicate: 'FieldValueDuplicate',
  invalid: 'FieldValueInvalid',
  notSupported: 'FieldValueNotSupported',
  forbidden: 'FieldValueForbidden',
  tooLong: 'FieldValueTooLong',
  tooMany: 'FieldValueTooMany',
});

/** A value already written the way Go's `%#v` prints it (`map[string]string{"app":"x"}`). */
export class GoLiteral {
  constructor(readonly text: string) {}
}

/** Go's `%q` for a string (JSON's escaping is close enough for the characters names may hold). */
export function goQuote(value: string): string {
  return JSON.stringify(value);
}

/** `map[string]string{"a":"b", "c":"d"}` with sorted keys; `map[string]string(nil)` when absent. */
export function goStringMap(map: Record<string, string> | undefined | null): GoLiteral {
  if (!map) return new GoLiteral('map[string]string(nil)');
  const entries = Object.keys(map)
    .sort()
    .map((k) => `${goQuote(k)}:${goQuote(String(map[k]))}`);
  return new GoLiteral(`map[string]string{${entries.join(', ')}}`);
}

/** `[]string{"a", "b"}`, or `[]string(nil)`. */
export function goStringSlice(values: readonly string[] | undefined | null): GoLiteral {
  if (!values) return new GoLiteral('[]string(nil)');
  return new GoLiteral(`[]string{${values.map(goQuote).join(', ')}}`);
}

/** How field.Error prints a bad value: numbers and booleans bare, strings quoted, absent values as "null". */
export function goValue(value: unknown): string {
  if (value instanceof GoLiteral) return value.text;
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

function cause(type: string, field: string, body: string, detail = ''): StatusCause {
  return { type, field, message: detail ? `${body}: ${detail}` : body };
}

export function invalid(field: string, value: unknown, detail: string): StatusCause {
  return cause(CAUSE_TYPE.invalid, field, `Invalid value: ${goValue(value)}`, detail);
}

export function required(field: string, detail = ''): StatusCause {
  return cause(CAUSE_TYPE.required, field, 'Required value', detail);
}

export function notSupported(field: string, value: unknown, supported: readonly string[]): StatusCause {
  const detail = supported.length ? `supported values: ${supported.map(goQuote).join(', ')}` : '';
  return cause(CAUSE_TYPE.notSupported, field, `Unsupported value: ${goValue(value)}`, detail);
}

export function duplicate(field: string, value: unknown, detail = ''): StatusCause {
  return cause(CAUSE_TYPE.duplicate, field, `Duplicate value: ${goValue(value)}`, detail);
}

export function forbidden(field: string, detail: string): StatusCause {
  return cause(CAUSE_TYPE.forbidden, field, 'Forbidden', detail);
}

export function notFound(field: string, value: unknown): StatusCause {
  return cause(CAUSE_TYPE.notFound, field, `Not found: ${goValue(value)}`);
}

export function tooLong(field: string, maxBytes: number): StatusCause {
  return cause(CAUSE_TYPE.tooLong, field, 'Too long', `must have at most ${maxBytes} bytes`);
}

/** A list with more items than allowed (field.TooMany). */
export function tooMany(field: string, count: number, max: number): StatusCause {
  return cause(CAUSE_TYPE.tooMany, field, `Too many: ${count}`, `must have at most ${max} items`);
}

/** Field paths: `child('spec', 'replicas')` → "spec.replicas"; `index('spec.containers', 0)` → "spec.containers[0]". */
export const child = (path: string, ...names: string[]): string => names.reduce((p, n) => (p ? `${p}.${n}` : n), path);
export const index = (path: string, i: number): string => `${path}[${i}]`;
export const key = (path: string, k: string): string => `${path}[${k}]`;

export const NEGATIVE_MESSAGE = 'must be greater than or equal to 0';
export const NOT_POSITIVE_MESSAGE = 'must be greater than zero';

export function validateNonnegative(value: number | undefined, field: string): StatusCause[] {
  return value !== undefined && value < 0 ? [invalid(field, value, NEGATIVE_MESSAGE)] : [];
}

export function validatePositive(value: number | undefined, field: string): StatusCause[] {
  return value !== undefined && value <= 0 ? [invalid(field, value, NOT_POSITIVE_MESSAGE)] : [];
}

/** Kubernetes' InclusiveRangeError. */
export const inclusiveRange = (lo: number, hi: number) => `must be between ${lo} and ${hi}, inclusive`;
