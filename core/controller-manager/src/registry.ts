import type { ControllerDefinition, ControllerRegistry } from '@skiff/kernel';
import { ControllerManagerError } from './errors.js';

/** The registry handed to the `controllers` hook: named control loops, in registration order. */
export class ControllerRegistryImpl implements ControllerRegistry {
  private readonly controllers = new Map<string, ControllerDefinition>();

  register(controller: ControllerDefinition): void {
    if (!controller || typeof controller.name !== 'string' || controller.name === '')
      throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_INVALID', { detail: 'it needs a non-empty "name"' });
    if (typeof controller.start !== 'function')
      throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_INVALID', { detail: `controller "${controller.name}" has no start(ctx) function` });
    if (this.controllers.has(controller.name)) throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_DUPLICATE', { name: controller.name });
    this.controllers.set(controller.name, controller);
  }

  list(): ControllerDefinition[] {
    return [...this.controllers.values()];
  }
}
