import { assertCanI, createLoopbackClient } from '@skiff/client';
import { definePlugin, LIFECYCLE_STAGE, packageInfo } from '@skiff/kernel';
import type { UserInfo } from '@skiff/api';
import { ControllerManager } from './manager.js';
import { controllerManagerOptionsSchema } from './options.js';
import { ControllerRegistryImpl } from './registry.js';

export const PLUGIN_NAME = '@skiff/controller-manager';

/** The identity kube-controller-manager uses; authorization plugins grant it what controllers need. */
export const CONTROLLER_MANAGER_USER: UserInfo = Object.freeze({
  username: 'system:kube-controller-manager',
  groups: ['system:authenticated'],
});

/**
 * Hosts the control loops other plugins register with the `controllers` hook. They talk to the API
 * server in this process through the loopback client, so every request still runs the full pipeline.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiHandler'],
  options: controllerManagerOptionsSchema,
  apply(kernel, options) {
    let manager: ControllerManager | undefined;

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.CONTROLLER_MANAGER, {
      async start() {
        const registry = new ControllerRegistryImpl();
        kernel.hooks.controllers.call(registry);
        const client = createLoopbackClient(kernel.resolve('apiHandler'), CONTROLLER_MANAGER_USER);
        await assertCanI(client, CONTROLLER_MANAGER_USER.username, { verb: 'create', group: '', resource: 'pods' });
        manager = new ControllerManager({ client, logger: kernel.logger.child({ component: 'controller-manager' }) }, options);
        await manager.start(registry.list(), (name) => registry.pluginOf(name));
      },
      async stop() {
        await manager?.stop();
        manager = undefined;
      },
    });
  },
});
