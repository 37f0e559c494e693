import { ApiError, errorMessage, errors, parseFieldSelector, parseLabelSelector, type KubeObject } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { isInitialized } from './initializers.js';

export type ObjectFilter = (object: KubeObject) => boolean;

/**
 * The list/watch filter of a request: label selector, field selector (metadata.name, metadata.namespace and
 * the definition's own fields) and, unless `includeUninitialized`, only initialized objects. Selectors are
 * parsed once per request, never per object.
 */
export function listFilter(definition: ResourceDefinition, query: Record<string, string | undefined>, includeUninitialized: boolean): ObjectFilter | undefined {
  const labels = query.labelSelector ? parseSelector(() => parseLabelSelector(query.labelSelector!), 'labelSelector') : undefined;
  const fields = query.fieldSelector ? parseSelector(() => parseFieldSelector(query.fieldSelector!), 'fieldSelector') : undefined;
  if (fields)
    checkFieldNames(
      definition,
      fields.terms.map((term) => term.field),
    );
  if (!labels && !fields && includeUninitialized) return undefined;
  const extraFields = definition.fieldSelectors;
  return (object) => {
    if (!includeUninitialized && !isInitialized(object)) return false;
    if (labels && !labels.matches(object.metadata.labels ?? {})) return false;
    if (fields && !fields.matches((field: string) => fieldValue(object, field, extraFields))) return false;
    return true;
  };
}

function fieldValue(object: KubeObject, field: string, extra: ResourceDefinition['fieldSelectors']): string | undefined {
  if (field === 'metadata.name') return object.metadata.name ?? '';
  if (field === 'metadata.namespace') return object.metadata.namespace ?? '';
  return extra?.[field]?.(object) ?? '';
}

/** Kubernetes answers 400 for a field it cannot select on, rather than silently matching nothing. */
function checkFieldNames(definition: ResourceDefinition, fields: string[]): void {
  for (const field of fields) {
    if (field === 'metadata.name' || field === 'metadata.namespace' || definition.fieldSelectors?.[field]) continue;
    throw errors.badRequest(`field label not supported: ${field}`);
  }
}

function parseSelector<T>(parse: () => T, parameter: string): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw errors.badRequest(`unable to parse requirement in ${parameter}: ${errorMessage(err)}`);
  }
}
