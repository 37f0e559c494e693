// Field errors worded the way Kubernetes' field.Error prints them, with bad values printed as Go does:
// integers and floats with `%v`, strings with `%q`, maps and lists as JSON with sorted keys.
import { type StatusCause } from '@skiff/api';
import { CAUSE_TYPE } from '@skiff/api/validation';

/** A bad value that is not printed (Go's field.OmitValueType): `Invalid value: <detail>`. */
export const OMIT = Symbol('omit');

/** A bad value already printed (a Go struct marshalled in field order, say). */
export class Printed {
  constructor(readonly text: string) {}
}

/** Cause types field.Error has beyond the ones @skiff/api names. */
export const TYPE_INVALID = 'FieldValueTypeInvalid';
const INTERNAL = 'InternalError';

/** Go's `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e6 up (`1e+06`). */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa, exponentText] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(value);
}

/** A JSON number as Go prints the int64 or float64 it decodes to. */
export function goNumber(value: number): string {
  return Number.isInteger(value) && Math.abs(value) < 2 ** 63 ? String(value) : goFloat(value);
}

const HTML_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026' };

/** Go's json.Marshal of a decoded JSON value: map keys sorted, HTML characters escaped. */
export function goJSON(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value).replace(/[<>&]/g, (c) => HTML_ESCAPES[c]!);
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map(goJSON).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return `{${keys.map((k) => `${goJSON(k)}:${goJSON(record[k])}`).join(',')}}`;
}

/** How field.Error's body prints a bad value. */
export function goBadValue(value: unknown): string {
  if (value instanceof Printed) return value.text;
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  return goJSON(value);
}

function body(head: string, value: unknown, detail: string): string {
  const withValue = value === OMIT ? head : `${head}: ${goBadValue(value)}`;
  return detail ? `${withValue}: ${detail}` : withValue;
}

export function invalid(field: string, value: unknown, detail: string): StatusCause {
  return { type: CAUSE_TYPE.invalid, field, message: body('Invalid value', value, detail) };
}

export function typeInvalid(field: string, value: unknown, detail: string): StatusCause {
  return { type: TYPE_INVALID, field, message: body('Invalid value', value, detail) };
}

export function required(field: string, detail = ''): StatusCause {
  return { type: CAUSE_TYPE.required, field, message: detail ? `Required value: ${detail}` : 'Required value' };
}

export function forbidden(field: string, detail: string): StatusCause {
  return { type: CAUSE_TYPE.forbidden, field, message: detail ? `Forbidden: ${detail}` : 'Forbidden' };
}

export function duplicate(field: string, value: unknown): StatusCause {
  return { type: CAUSE_TYPE.duplicate, field, message: body('Duplicate value', value, '') };
}

export function notSupported(field: string, value: unknown, supported: readonly string[]): StatusCause {
  const detail = supported.length ? `supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return { type: CAUSE_TYPE.notSupported, field, message: body('Unsupported value', value, detail) };
}

export function tooLong(field: string, max: number): StatusCause {
  const detail = max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return { type: CAUSE_TYPE.tooLong, field, message: `Too long: ${detail}` };
}

export function tooMany(field: string, actual: number, max: number): StatusCause {
  const detail = max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items';
  return { type: CAUSE_TYPE.tooMany, field, message: body('Too many', actual >= 0 ? actual : OMIT, detail) };
}

export function internal(field: string, detail: string): StatusCause {
  return { type: INTERNAL, field, message: `Internal error: ${detail}` };
}

/**
 * field.Path building on strings. `undefined` is Go's nil path: a child of it starts a path, and an error on
 * it prints as `<nil>` (upstream validates custom resources from a nil root).
 */
export const paths = Object.freeze({
  child: (path: string | undefined, name: string): string => (path === undefined || path === '' ? name : `${path}.${name}`),
  key: (path: string | undefined, key: string): string => `${path ?? ''}[${key}]`,
  index: (path: string | undefined, i: number): string => `${path ?? ''}[${i}]`,
  field: (path: string | undefined): string => path ?? '<nil>',
});
