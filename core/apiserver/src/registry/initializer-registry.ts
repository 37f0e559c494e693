import type { Initializer, InitializerRegistry } from '@skiff/kernel';
import { ApiServerError } from '../errors.js';

/** Initializers by resource, in registration order (the order they become `metadata.initializers.pending`). */
export class InitializerRegistryImpl implements InitializerRegistry {
  private readonly byResource = new Map<string, Initializer[]>();
  private readonly names = new Set<string>();

  register(initializer: Initializer): void {
    const key = `${initializer.group}/${initializer.resource}`;
    // One name may initialize several resources (as an InitializerConfiguration rule did), once each.
    if (this.names.has(`${initializer.name} ${key}`))
      throw new ApiServerError('SKIFF_ERR_APISERVER_INITIALIZER_DUPLICATE', { name: initializer.name, resource: initializer.resource });
    this.names.add(`${initializer.name} ${key}`);
    const list = this.byResource.get(key);
    if (list) list.push(initializer);
    else this.byResource.set(key, [initializer]);
  }

  forResource(group: string, resource: string): Initializer[] {
    return this.byResource.get(`${group}/${resource}`) ?? [];
  }

  /** The initializer with this name, wherever it is registered. */
  byName(group: string, resource: string, name: string): Initializer | undefined {
    return this.forResource(group, resource).find((initializer) => initializer.name === name);
  }
}
