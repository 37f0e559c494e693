import { pluginInCharge, type SchedulerPlugin, type SchedulerPluginRegistry } from '@skiff/kernel';
import { SchedulerError } from '../errors.js';
import { PLUGIN_NAME } from '../names.js';

/** The registry handed to the schedulerPlugins hook: plugins by name, in registration order. */
export class PluginRegistry implements SchedulerPluginRegistry {
  private readonly plugins = new Map<string, SchedulerPlugin>();
  private readonly packages = new Map<string, string>();

  register(plugin: SchedulerPlugin): void {
    const name = typeof plugin?.name === 'string' ? plugin.name : '';
    if (!name) throw new SchedulerError('SKIFF_ERR_SCHEDULER_PLUGIN_INVALID', { name: '(unnamed)', detail: 'it needs a non-empty "name"' });
    if (this.plugins.has(name)) throw new SchedulerError('SKIFF_ERR_SCHEDULER_PLUGIN_DUPLICATE', { name });
    this.plugins.set(name, plugin);
    this.packages.set(name, pluginInCharge()?.pluginName ?? PLUGIN_NAME);
  }

  /** The package that registered a plugin (the scheduler's own for the built-ins), so failures can name it. */
  packageOf(name: string): string | undefined {
    return this.packages.get(name);
  }

  get(name: string): SchedulerPlugin | undefined {
    return this.plugins.get(name);
  }

  list(): SchedulerPlugin[] {
    return [...this.plugins.values()];
  }
}
