import type { KubeObject } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import type { InitializerRegistryImpl } from '../registry/initializer-registry.js';

/** An object is initialized when no initializer is pending; until then only `includeUninitialized` readers see it. */
export function isInitialized(object: KubeObject): boolean {
  return !object.metadata.initializers?.pending?.length;
}

/**
 * Initializer bookkeeping for one write. On create the registered initializers become
 * `metadata.initializers.pending`. Then, on create and on update alike, the in-process initializers at the
 * head of the list run in order and leave it; an external one at the head stops the run until a controller
 * clears its entry with an update. An empty list is removed. `object` has writable metadata; it is cloned
 * before an initializer changes it, because the rest of it may be frozen.
 */
export async function runInitializers(
  object: KubeObject,
  definition: ResourceDefinition,
  registry: InitializerRegistryImpl,
  operation: 'CREATE' | 'UPDATE',
): Promise<KubeObject> {
  if (operation === 'CREATE') {
    const registered = registry.forResource(definition.group, definition.resource);
    if (registered.length === 0) {
      delete object.metadata.initializers;
      return object;
    }
    object.metadata.initializers = { pending: registered.map((initializer) => ({ name: initializer.name })) };
  }
  const pending = object.metadata.initializers?.pending;
  if (!pending?.length) {
    delete object.metadata.initializers;
    return object;
  }
  let working = object;
  let cloned = false;
  for (;;) {
    const head = working.metadata.initializers?.pending?.[0];
    const initializer = head && registry.byName(definition.group, definition.resource, head.name);
    if (!head || !initializer?.initialize) break;
    if (!cloned) {
      working = structuredClone(working);
      cloned = true;
    }
    await initializer.initialize(working);
    const remaining = working.metadata.initializers?.pending ?? [];
    working.metadata.initializers = { ...{}, ...working.metadata.initializers, pending: remaining.filter((entry) => entry.name !== head.name) };
  }
  if (!working.metadata.initializers?.pending?.length) delete working.metadata.initializers;
  return working;
}
