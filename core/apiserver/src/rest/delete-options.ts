import { errors, isJsonObject } from '@skiff/api';
import type { DeleteOptions } from '@skiff/kernel';
import { queryBool, queryInt } from '../util/query.js';
import { parseResourceVersion } from './resource-version.js';

type DeletionPropagation = NonNullable<DeleteOptions['propagationPolicy']>;

const POLICIES: readonly DeletionPropagation[] = ['Background', 'Foreground', 'Orphan'];

function isPolicy(value: unknown): value is DeletionPropagation {
  return POLICIES.some((policy) => policy === value);
}

/**
 * DeleteOptions from the body (kubectl sends `{"propagationPolicy":"Background"}`) or, like Kubernetes,
 * from query parameters. The deprecated `orphanDependents` maps onto a policy.
 */
export function deleteOptionsOf(body: unknown, query: Record<string, string | undefined>): DeleteOptions {
  const source = isJsonObject(body) ? body : {};
  const options: DeleteOptions = {};
  const grace = source.gracePeriodSeconds ?? queryInt(query, 'gracePeriodSeconds');
  if (grace !== undefined && grace !== null) {
    if (typeof grace !== 'number' || !Number.isInteger(grace)) throw errors.badRequest('gracePeriodSeconds must be an integer');
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
