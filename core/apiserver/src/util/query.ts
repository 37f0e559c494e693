import { errors } from '@skiff/api';

/** Go's strconv.ParseBool, which Kubernetes uses for boolean query parameters (watch=1, watch=true). */
export function queryBool(value: string | undefined): boolean {
  return value === 'true' || value === '1' || value === 'True' || value === 'TRUE' || value === 't' || value === 'T';
}

/** A non-negative integer query parameter, or undefined when absent; 400 when malformed. */
export function queryInt(query: Record<string, string | undefined>, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw errors.badRequest(`invalid value for query parameter ${name}: ${JSON.stringify(raw)}`);
  return value;
}

/** Rebuilds `path?query` for audit and messages. */
export function requestUri(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.append(key, value);
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}
