import { resolve } from 'node:path';
import {
  assertCanI,
  createClientFromKubeconfig,
  createLoopbackClient,
  leaderElectionOptionsProblem,
  runWhileLeading,
  type LeaderElector,
  type SkiffClient,
} from '@skiff/client';
import { definePlugin, KernelError, LIFECYCLE_STAGE, packageInfo, type Kernel } from '@skiff/kernel';
import type { UserInfo } from '@skiff/api';
import { checkEnabledNames } from './enabled.js';
import { ControllerManager } from './manager.js';
import { controllerManagerOptionsSchema, type ControllerManagerOptions } from './options.js';
import { ControllerRegistryImpl } from './registry.js';

export const PLUGIN_NAME = '@skiff/controller-manager';

/** The identity kube-controller-manager uses; authorization plugins grant it what controllers need. */
export const CONTROLLER_MANAGER_USER: UserInfo = Object.freeze({
  username: 'system:kube-controller-manager',
  groups: ['system:authenticated'],
});

/**
 * Hosts the control loops other plugins register with the `controllers` hook. They talk to the API
 * server in this process through the loopback client, so every request still runs the full pipeline;
 * with `kubeconfig`, to the API servers that kubeconfig (and `servers`) name, over HTTPS. With
 * `leaderElection.leaderElect` the controllers run only while this copy holds the lease.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  wants: ['apiHandler'],
  options: controllerManagerOptionsSchema,
  apply(kernel, options) {
    checkConnectionOptions(options);
    let manager: ControllerManager | undefined;
    let elector: LeaderElector | undefined;
    let client: SkiffClient | undefined;

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.CONTROLLER_MANAGER, {
      async start() {
        const registry = new ControllerRegistryImpl();
        kernel.hooks.controllers.call(registry);
        const controllers = registry.list();
        checkEnabledNames(
          options.enabled,
          controllers.map((controller) => controller.name),
        );
        const connection = connect(kernel, options);
        client = connection.client;
        await assertCanI(client, connection.who, { verb: 'create', group: '', resource: 'pods' });
        const logger = kernel.logger.child({ component: 'controller-manager' });
        const deps = { client, logger, metrics: kernel.resolve('metrics') };
        // A manager cannot start twice (its informers and stop signal are one-shot): each term as leader gets a new one.
        const startControllers = async () => {
          manager = new ControllerManager(deps, options);
          await manager.start(controllers, (name) => registry.pluginOf(name));
        };
        const stopControllers = async () => {
          await manager?.stop();
          manager = undefined;
        };
        if (!options.leaderElection.leaderElect) return startControllers();
        elector = runWhileLeading(client, options.leaderElection, { start: startControllers, stop: stopControllers }, logger.child({ leaderElection: true }));
      },
      async stop() {
        await elector?.stop();
        elector = undefined;
        await manager?.stop();
        manager = undefined;
        client?.close();
        client = undefined;
      },
    });
  },
});

function checkConnectionOptions(options: ControllerManagerOptions): void {
  const problem =
    (options.leaderElection.leaderElect && leaderElectionOptionsProblem(options.leaderElection)) ||
    (options.servers.length > 0 && !options.kubeconfig ? 'option "servers" needs "kubeconfig" (the servers share its CA and credentials)' : undefined);
  if (problem) throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: problem });
}

/** The API server in this process (as system:kube-controller-manager), or the kubeconfig's with its credentials. */
function connect(kernel: Kernel, options: ControllerManagerOptions): { client: SkiffClient; who: string } {
  if (options.kubeconfig) {
    const file = resolve(kernel.config.rootDir, options.kubeconfig);
    return { client: createClientFromKubeconfig(file, undefined, { servers: options.servers }), who: `the user of kubeconfig ${file}` };
  }
  if (!kernel.hasComponent('apiHandler')) throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_NEEDED', { name: PLUGIN_NAME, component: 'apiHandler' });
  return { client: createLoopbackClient(kernel.resolve('apiHandler'), CONTROLLER_MANAGER_USER), who: CONTROLLER_MANAGER_USER.username };
}
