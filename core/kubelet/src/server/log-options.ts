import type { ContainerLogOptions } from '@skiff/kernel';
import { HttpFailure } from './answers.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** A boolean query parameter as Kubernetes converts them: absent, "0" and "false" (any case) are false, anything else true. */
export function queryBool(value: string | null): boolean {
  return value !== null && value !== '0' && value.toLowerCase() !== 'false';
}

function queryInt(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  const value = /^[+-]?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value)) throw new HttpFailure(400, `invalid value for query parameter ${name}: ${JSON.stringify(raw)} (expected a whole number)`);
  return value;
}

/**
 * PodLogOptions from `/containerLogs` query parameters, as upstream's kubelet reads them (with its old `tail`
 * parameter: a number, or `all` for everything): 400 for a value that does not parse, 422 for one out of range.
 */
export function parseLogOptions(query: URLSearchParams): ContainerLogOptions {
  const tail = query.get('tail');
  const tailQuery = tail === null ? query : new URLSearchParams([...query].filter(([name]) => name !== 'tailLines'));
  if (tail !== null && tail !== 'all') tailQuery.set('tailLines', tail);
  const options: ContainerLogOptions = {
    follow: queryBool(query.get('follow')),
    previous: queryBool(query.get('previous')),
    timestamps: queryBool(query.get('timestamps')),
  };
  const tailLines = queryInt(tailQuery, 'tailLines');
  const sinceSeconds = queryInt(query, 'sinceSeconds');
  const limitBytes = queryInt(query, 'limitBytes');
  const sinceTime = query.get('sinceTime') || undefined;
  if (sinceTime !== undefined && (!RFC3339.test(sinceTime) || Number.isNaN(Date.parse(sinceTime)))) {
    throw new HttpFailure(400, `invalid value for query parameter sinceTime: ${JSON.stringify(sinceTime)} (expected an RFC 3339 time)`);
  }
  const problems: string[] = [];
  if (tailLines !== undefined && tailLines < 0) problems.push(`tailLines: Invalid value: ${tailLines}: must be greater than or equal to 0`);
  if (limitBytes !== undefined && limitBytes < 1) problems.push(`limitBytes: Invalid value: ${limitBytes}: must be greater than 0`);
  if (sinceSeconds !== undefined && sinceTime !== undefined) problems.push('at most one of `sinceTime` or `sinceSeconds` may be specified');
  else if (sinceSeconds !== undefined && sinceSeconds < 1) problems.push(`sinceSeconds: Invalid value: ${sinceSeconds}: must be greater than 0`);
  if (problems.length) throw new HttpFailure(422, `PodLogOptions is invalid: ${problems.join(', ')}`);
  if (tailLines !== undefined) options.tailLines = tailLines;
  if (sinceSeconds !== undefined) options.sinceSeconds = sinceSeconds;
  if (sinceTime !== undefined) options.sinceTime = sinceTime;
  if (limitBytes !== undefined) options.limitBytes = limitBytes;
  return options;
}
