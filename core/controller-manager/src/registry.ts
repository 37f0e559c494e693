import { Registrations, type ControllerDefinition, type ControllerRegistry } from '@skiff/kernel';
import { ControllerManagerError } from './errors.js';

/** The registry handed to the `controllers` hook: named control loops, in registration order. */
export class ControllerRegistryImpl implements ControllerRegistry {
  private readonly controllers = new Registrations<ControllerDefinition>({
    duplicate: (name) => new ControllerManagerError('SKIFF_ERR_CONTROLLER_DUPLICATE', { name }),
  });

  register(controller: ControllerDefinition): void {
    if (!controller || typeof controller.name !== 'string' || controller.name === '')
      throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_INVALID', { detail: 'it needs a non-empty "name"' });
    if (typeof controller.start !== 'function')
      throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_INVALID', { detail: `controller "${controller.name}" has no start(ctx) function` });
    this.controllers.add(controller.name, controller);
  }

  /** The plugin whose `controllers` tap registered a controller. */
  pluginOf(name: string): string | undefined {
    return this.controllers.pluginOf(name);
  }

  list(): ControllerDefinition[] {
    return this.controllers.list();
  }
}
