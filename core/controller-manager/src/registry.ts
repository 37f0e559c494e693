import { pluginInCharge, type ControllerDefinition, type ControllerRegistry } from '@skiff/kernel';
import { ControllerManagerError } from './errors.js';

/** The registry handed to the `controllers` hook: named control loops, in registration order. */
export class ControllerRegistryImpl implements ControllerRegistry {
  private readonly controllers = new Map<string, ControllerDefinition>();
  private readonly plugins = new Map<string, string>();

  register(controller: ControllerDefinition): void {
    if (!controller || typeof controller.name !== 'string' || controller.name === '')
      throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_INVALID', { detail: 'it needs a non-empty "name"' });
    if (typeof controller.start !== 'function')
      throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_INVALID', { detail: `controller "${controller.name}" has no start(ctx) function` });
    if (this.controllers.has(controller.name)) throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_DUPLICATE', { name: controller.name });
    this.controllers.set(controller.name, controller);
    const plugin = pluginInCharge()?.pluginName;
    if (plugin) this.plugins.set(controller.name, plugin);
  }

  /** The plugin whose `controllers` tap registered a controller. */
  pluginOf(name: string): string | undefined {
    return this.plugins.get(name);
  }

  list(): ControllerDefinition[] {
    return [...this.controllers.values()];
  }
}
