import { pluginInCharge, type NamedRegistry } from '@skiff/kernel';
import { KubeletError } from './errors.js';

/** Runtimes, networks or volume plugins by name, as the runtimes / networks / volumes hooks fill them. */
export class NameRegistry<T extends { name: string }> implements NamedRegistry<T> {
  private readonly items = new Map<string, T>();
  private readonly plugins = new Map<string, string>();

  constructor(private readonly kind: string) {}

  register(item: T): void {
    if (this.items.has(item.name)) throw new KubeletError('SKIFF_ERR_KUBELET_DUPLICATE', { kind: this.kind, name: item.name });
    this.items.set(item.name, item);
    const plugin = pluginInCharge()?.pluginName;
    if (plugin) this.plugins.set(item.name, plugin);
  }

  /** The plugin whose tap registered an item, so the kubelet's errors can name it. */
  pluginOf(name: string): string | undefined {
    return this.plugins.get(name);
  }

  get(name: string): T | undefined {
    return this.items.get(name);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  /** The names, for error messages: "simulated, containerd" or "none". */
  known(): string {
    return [...this.items.keys()].join(', ') || 'none';
  }
}
