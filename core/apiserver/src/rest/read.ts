import { errors } from '@skiff/api';
import type { StoredObject } from '@skiff/store';
import type { RestContext } from './context.js';
import { isInitialized } from './initializers.js';
import { objectKey } from './keys.js';

/** The stored object the request's path names, or a 404 (also for objects hidden by pending initializers). */
export async function readObject(ctx: RestContext, options: { includeUninitialized?: boolean } = {}): Promise<StoredObject> {
  const { definition, info } = ctx;
  const stored = await ctx.core.store.get(objectKey(definition, info.namespace, info.name));
  if (!stored || (!options.includeUninitialized && !isInitialized(stored.object))) throw errors.notFound(definition.resource, definition.group, info.name);
  return stored;
}
