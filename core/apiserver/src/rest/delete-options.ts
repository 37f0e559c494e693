import { errors, isJsonObject, type KubeObject } from '@skiff/api';
import { decodeObject, messageSchema } from '@skiff/api/schema';
import type { DeleteOptions } from '@skiff/kernel';
import type { BodyFacts } from '../pipeline/decode-body.js';
import { typeCheck, type TypeCheckTarget } from '../pipeline/type-check.js';
import { queryBool, queryInt } from '../util/query.js';
import { parseResourceVersion } from './resource-version.js';

/**
 * The longest grace period: the longest duration Go's time.Duration holds, in whole seconds (about 292
 * years). Kubernetes multiplies the grace period into one and overflows past it; Skiff refuses it instead.
 */
export const MAX_GRACE_PERIOD_SECONDS = 9_223_372_036;

const DELETE_OPTIONS: TypeCheckTarget = {
  kind: 'DeleteOptions',
  version: 'v1',
  decode: (object, _strict, numberLiterals) =>
    decodeObject(messageSchema('k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'), object, numberLiterals ? { numberLiterals } : {}),
};

type DeletionPropagation = NonNullable<DeleteOptions['propagationPolicy']>;

const POLICIES: readonly DeletionPropagation[] = ['Background', 'Foreground', 'Orphan'];

function isPolicy(value: unknown): value is DeletionPropagation {
  return POLICIES.some((policy) => policy === value);
}

/**
 * DeleteOptions from the body (kubectl sends `{"propagationPolicy":"Background"}`) or, like Kubernetes,
 * from query parameters. The deprecated `orphanDependents` maps onto a policy. A body is type-checked
 * as a DeleteOptions (400 for a wrong type or an integer Go would not take; `body` says how its text
 * wrote numbers); a grace period past MAX_GRACE_PERIOD_SECONDS is a 422.
 */
export function deleteOptionsOf(body: unknown, query: Record<string, string | undefined>, facts?: BodyFacts): DeleteOptions {
  const source = isJsonObject(body) ? body : {};
  if (isJsonObject(body)) typeCheck(body as KubeObject, DELETE_OPTIONS, 'Ignore', facts);
  const options: DeleteOptions = {};
  const grace = source.gracePeriodSeconds ?? queryInt(query, 'gracePeriodSeconds');
  if (grace !== undefined && grace !== null) {
    if (typeof grace !== 'number' || !Number.isInteger(grace)) throw errors.badRequest('gracePeriodSeconds must be an integer');
    if (grace > MAX_GRACE_PERIOD_SECONDS)
      throw errors.invalid('DeleteOptions', 'meta.k8s.io', '', [
        {
          type: 'FieldValueInvalid',
          field: 'gracePeriodSeconds',
          message: `Invalid value: ${grace}: must be less than or equal to ${MAX_GRACE_PERIOD_SECONDS} (the longest duration Kubernetes represents)`,
        },
      ]);
    options.gracePeriodSeconds = Math.max(0, grace);
  }
  const orphan = source.orphanDependents ?? (query.orphanDependents !== undefined ? queryBool(query.orphanDependents) : undefined);
  const policy = source.propagationPolicy ?? query.propagationPolicy ?? (orphan === true ? 'Orphan' : orphan === false ? 'Background' : undefined);
  if (policy !== undefined && policy !== null) {
    if (!isPolicy(policy)) throw errors.badRequest(`propagationPolicy must be one of Background, Foreground, Orphan (got ${JSON.stringify(policy)})`);
    options.propagationPolicy = policy;
  }
  const preconditions = source.preconditions;
  if (isJsonObject(preconditions)) {
    parseResourceVersion(preconditions.resourceVersion, 'preconditions.resourceVersion');
    options.preconditions = preconditions;
  }
  return options;
}
