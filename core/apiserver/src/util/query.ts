import { errors } from '@skiff/api';

// Go's strconv.ParseBool, which Kubernetes uses for boolean query parameters (watch=1, watch=true).
const TRUE_VALUES = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE_VALUES = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** A boolean query parameter where anything but a true value is false. */
export function queryBool(value: string | undefined): boolean {
  return value !== undefined && TRUE_VALUES.has(value);
}

/** A boolean query parameter whose absence means something of its own (Go's *bool); 400 when not a boolean. */
export function queryOptionalBool(query: Record<string, string | undefined>, name: string): boolean | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  if (TRUE_VALUES.has(raw)) return true;
  if (FALSE_VALUES.has(raw)) return false;
  throw errors.badRequest(`invalid value for query parameter ${name}: ${JSON.stringify(raw)} (expected true or false)`);
}

/** A non-negative integer query parameter, or undefined when absent; 400 when malformed. */
export function queryInt(query: Record<string, string | undefined>, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  // Decimal digits only, as Go's strconv.ParseInt reads them: no exponent, sign, fraction or hex.
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value)) throw errors.badRequest(`invalid value for query parameter ${name}: ${JSON.stringify(raw)} (expected a whole number)`);
  return value;
}

/** Rebuilds `path?query` for audit and messages. */
export function requestUri(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.append(key, value);
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}
