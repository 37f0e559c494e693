import { Registrations, type NamedRegistry } from '@skiff/kernel';
import { KubeletError } from './errors.js';

/** Runtimes, networks or volume plugins by name, as the runtimes / networks / volumes hooks fill them. */
export class NameRegistry<T extends { name: string }> implements NamedRegistry<T> {
  private readonly items: Registrations<T>;

  constructor(kind: string) {
    this.items = new Registrations<T>({ duplicate: (name) => new KubeletError('SKIFF_ERR_KUBELET_DUPLICATE', { kind, name }) });
  }

  register(item: T): void {
    this.items.add(item.name, item);
  }

  /** The plugin whose tap registered an item, so the kubelet's errors can name it. */
  pluginOf(name: string): string | undefined {
    return this.items.pluginOf(name);
  }

  get(name: string): T | undefined {
    return this.items.get(name);
  }

  list(): T[] {
    return this.items.list();
  }

  /** The names, for error messages: "simulated, containerd" or "none". */
  known(): string {
    return this.items.names().join(', ') || 'none';
  }
}
