import { errors, type StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { queryOptionalBool } from '../util/query.js';

// Skiff's resource versions are the store's revisions: unsigned decimal integers that fit Kubernetes'
// uint64 (it parses them with strconv.ParseUint). Clients must treat them as opaque, so anything else is
// a value this server never handed out.
const DIGITS = /^[0-9]+$/;
const MAX_RESOURCE_VERSION = 18446744073709551615n;

export const RESOURCE_VERSION_MATCH = Object.freeze({ NOT_OLDER_THAN: 'NotOlderThan', EXACT: 'Exact' });

/**
 * A resourceVersion a client sent, as a revision: `undefined` when absent or empty, 400 BadRequest naming
 * `field` and the value when it is not one this server could have issued.
 */
export function parseResourceVersion(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !DIGITS.test(value))
    throw invalidResourceVersion(field, value, 'must be an unsigned decimal integer, as returned by this server');
  if (BigInt(value) > MAX_RESOURCE_VERSION) throw invalidResourceVersion(field, value, `must be at most ${MAX_RESOURCE_VERSION}`);
  return Number(value);
}

/**
 * The revision an update or patch is conditional on (`metadata.resourceVersion` of the body): `undefined`
 * for an unconditional write, which Kubernetes also makes of "0".
 */
export function writePrecondition(value: unknown): number | undefined {
  const revision = parseResourceVersion(value, 'metadata.resourceVersion');
  return revision === 0 ? undefined : revision;
}

function invalidResourceVersion(field: string, value: unknown, detail: string) {
  const cause = fieldErrors.invalid(field, value, detail);
  return errors.badRequest(`${cause.field}: ${cause.message}`, [cause]);
}

/**
 * What a list must reflect, from Kubernetes' table of resourceVersion semantics:
 * - `latest`: resourceVersion unset (Most Recent) or "0" (Any, which this server serves as the latest);
 * - `notOlderThan`: a revision and `resourceVersionMatch=NotOlderThan`, or no match and no limit;
 * - `exact`: a revision and `resourceVersionMatch=Exact`, or no match and a limit;
 * - `continue`: the snapshot the continue token carries.
 */
export type ListConsistency = { kind: 'latest' } | { kind: 'continue' } | { kind: 'notOlderThan' | 'exact'; revision: number };

/** Checks a list's resourceVersion parameters (422 for a forbidden combination, 400 for a bad value). */
export function listConsistencyOf(query: Record<string, string | undefined>, limit: number | undefined): ListConsistency {
  throwIfInvalid(listOptionCauses(query));
  const revision = parseResourceVersion(query.resourceVersion, 'resourceVersion');
  if (query.continue) {
    if (revision !== undefined && revision !== 0) throw errors.badRequest('specifying resource version is not allowed when using continue');
    return { kind: 'continue' };
  }
  if (revision === undefined || revision === 0) return { kind: 'latest' };
  const match = query.resourceVersionMatch || (limit ? RESOURCE_VERSION_MATCH.EXACT : RESOURCE_VERSION_MATCH.NOT_OLDER_THAN);
  return { kind: match === RESOURCE_VERSION_MATCH.EXACT ? 'exact' : 'notOlderThan', revision };
}

/** Where a watch starts: after `revision` (0: now), with the current state first when `initialEvents`. */
export interface WatchStart {
  revision: number;
  initialEvents: boolean;
  /** `sendInitialEvents=true`: the initial state ends with an `initial-events-end` bookmark. */
  initialEventsRequested: boolean;
}

/**
 * Checks a watch's resourceVersion parameters (422 for a forbidden combination, 400 for a bad value).
 * resourceVersion unset or "0" starts with the current state; a revision starts after it, unless
 * `sendInitialEvents=true` asks for the state (not older than the revision) first.
 */
export function watchStartOf(query: Record<string, string | undefined>): WatchStart {
  const sendInitialEvents = queryOptionalBool(query, 'sendInitialEvents');
  throwIfInvalid(watchOptionCauses(query, sendInitialEvents));
  const revision = parseResourceVersion(query.resourceVersion, 'resourceVersion') ?? 0;
  return { revision, initialEvents: sendInitialEvents ?? revision === 0, initialEventsRequested: sendInitialEvents === true };
}

// The option rules of Kubernetes' ValidateListOptions (with the WatchList feature on), answered as it
// does: 422 Invalid for the kind ListOptions.meta.k8s.io.
function listOptionCauses(query: Record<string, string | undefined>): StatusCause[] {
  const causes: StatusCause[] = [];
  const match = query.resourceVersionMatch;
  if (match) {
    if (!query.resourceVersion)
      causes.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (query.continue) causes.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== RESOURCE_VERSION_MATCH.EXACT && match !== RESOURCE_VERSION_MATCH.NOT_OLDER_THAN)
      causes.push(fieldErrors.notSupported('resourceVersionMatch', match, [RESOURCE_VERSION_MATCH.EXACT, RESOURCE_VERSION_MATCH.NOT_OLDER_THAN, '']));
    if (match === RESOURCE_VERSION_MATCH.EXACT && query.resourceVersion === '0')
      causes.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (query.sendInitialEvents) causes.push(fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return causes;
}

function watchOptionCauses(query: Record<string, string | undefined>, sendInitialEvents: boolean | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const match = query.resourceVersionMatch;
  if (sendInitialEvents !== undefined && match !== RESOURCE_VERSION_MATCH.NOT_OLDER_THAN)
    causes.push(fieldErrors.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  if (match) {
    if (sendInitialEvents === undefined)
      causes.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== RESOURCE_VERSION_MATCH.NOT_OLDER_THAN)
      causes.push(fieldErrors.notSupported('resourceVersionMatch', match, [RESOURCE_VERSION_MATCH.NOT_OLDER_THAN]));
    if (query.continue) causes.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return causes;
}

function throwIfInvalid(causes: StatusCause[]): void {
  if (causes.length > 0) throw errors.invalid('ListOptions', 'meta.k8s.io', '', causes);
}
