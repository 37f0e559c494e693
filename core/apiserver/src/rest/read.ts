import { errors, type KubeObject } from '@skiff/api';
import type { StoredObject } from '@skiff/store';
import type { RestContext } from './context.js';
import { isInitialized } from './initializers.js';
import { objectKey } from './keys.js';

/**
 * The stored object the request's path names, or a 404 (also for objects hidden by pending initializers).
 * `T` is the kind of the path's resource: the store keeps only objects of that kind under its keys.
 */
export async function readObject<T extends KubeObject = KubeObject>(
  ctx: RestContext,
  options: { includeUninitialized?: boolean } = {},
): Promise<StoredObject & { object: T }> {
  const { definition, info } = ctx;
  const stored = await ctx.core.store.get(objectKey(definition, info.namespace, info.name));
  if (!stored || (!options.includeUninitialized && !isInitialized(stored.object))) throw errors.notFound(definition.resource, definition.group, info.name);
  return stored as StoredObject & { object: T };
}
