import { Registrations, type SchedulerPlugin, type SchedulerPluginRegistry } from '@skiff/kernel';
import { SchedulerError } from '../errors.js';
import { PLUGIN_NAME } from '../names.js';

/** The registry handed to the schedulerPlugins hook: plugins by name, in registration order. */
export class PluginRegistry implements SchedulerPluginRegistry {
  private readonly plugins = new Registrations<SchedulerPlugin>({
    duplicate: (name) => new SchedulerError('SKIFF_ERR_SCHEDULER_PLUGIN_DUPLICATE', { name }),
    fallbackPlugin: PLUGIN_NAME,
  });

  register(plugin: SchedulerPlugin): void {
    const name = typeof plugin?.name === 'string' ? plugin.name : '';
    if (!name) throw new SchedulerError('SKIFF_ERR_SCHEDULER_PLUGIN_INVALID', { name: '(unnamed)', detail: 'it needs a non-empty "name"' });
    this.plugins.add(name, plugin);
  }

  /** The package that registered a plugin (the scheduler's own for the built-ins), so failures can name it. */
  packageOf(name: string): string | undefined {
    return this.plugins.pluginOf(name);
  }

  get(name: string): SchedulerPlugin | undefined {
    return this.plugins.get(name);
  }

  list(): SchedulerPlugin[] {
    return this.plugins.list();
  }
}
