import { pluginInCharge } from './tap-errors.js';

export interface RegistrationsOptions {
  /** The owner's coded error for a second registration under a name. */
  duplicate(name: string): Error;
  /** Who registered an item added outside any plugin's code (a component's own built-ins). */
  fallbackPlugin?: string;
}

/**
 * What plugins register by name through a registration hook (controllers, scheduler plugins, runtimes,
 * networks, volume plugins): the items in registration order, each with the plugin whose tap registered it
 * so later failures can name that plugin. A name is registered once; a second time is the owner's error.
 */
export class Registrations<T> {
  private readonly items = new Map<string, T>();
  private readonly plugins = new Map<string, string>();

  constructor(private readonly options: RegistrationsOptions) {}

  add(name: string, item: T): void {
    if (this.items.has(name)) throw this.options.duplicate(name);
    this.items.set(name, item);
    const plugin = pluginInCharge()?.pluginName ?? this.options.fallbackPlugin;
    if (plugin) this.plugins.set(name, plugin);
  }

  get(name: string): T | undefined {
    return this.items.get(name);
  }

  /** The plugin whose code registered the item under `name`. */
  pluginOf(name: string): string | undefined {
    return this.plugins.get(name);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  names(): string[] {
    return [...this.items.keys()];
  }
}
