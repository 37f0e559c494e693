import { assertCanI, createLoopbackClient, EventRecorderImpl, SharedInformerFactory } from '@skiff/client';
import { definePlugin, LIFECYCLE_STAGE, packageInfo, type Kernel } from '@skiff/kernel';
import { nodeReady } from './builtin/node-ready.js';
import { buildProfiles, type ProfileConfig } from './framework/profile.js';
import { PluginRegistry } from './framework/registry.js';
import { PLUGIN_NAME, SCHEDULER_COMPONENT, SCHEDULER_USER } from './names.js';
import { schedulerOptionsSchema } from './options.js';
import { Scheduler } from './scheduler.js';

declare module '@skiff/kernel' {
  interface Components {
    /** The running scheduler (for tests and tools that wait on its queue). */
    scheduler: Scheduler;
  }
}

/** The registry the schedulerPlugins hook fills: the built-in filters first, then every plugin's. */
export function collectSchedulerPlugins(kernel: Kernel): PluginRegistry {
  const registry = new PluginRegistry();
  registry.register(nodeReady);
  kernel.hooks.schedulerPlugins.call(registry);
  return registry;
}

/**
 * The scheduler component. On start it collects scheduler plugins through the schedulerPlugins hook,
 * resolves the profile, and schedules pending pods through the in-process API server as
 * system:kube-scheduler.
 */
export const schedulerPlugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  provides: ['scheduler'],
  needs: ['apiHandler'],
  options: schedulerOptionsSchema,
  apply(kernel, options) {
    let scheduler: Scheduler | undefined;
    let informers: SharedInformerFactory | undefined;
    const abort = new AbortController();
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.SCHEDULER, {
      async start() {
        const configs: ProfileConfig[] = options.profiles?.length ? (options.profiles as ProfileConfig[]) : [{ schedulerName: options.schedulerName }];
        const profiles = buildProfiles(collectSchedulerPlugins(kernel), configs, { percentageOfNodesToScore: options.percentageOfNodesToScore });
        const client = createLoopbackClient(kernel.resolve('apiHandler'), { username: SCHEDULER_USER, groups: ['system:authenticated'] });
        await assertCanI(client, SCHEDULER_USER, { verb: 'create', group: '', resource: 'pods', subresource: 'binding' });
        const logger = kernel.logger.child({ component: 'scheduler' });
        informers = new SharedInformerFactory(client, { logger });
        scheduler = new Scheduler({
          profiles,
          client,
          informers,
          recorder: new EventRecorderImpl(client, { component: SCHEDULER_COMPONENT, logger }),
          logger,
        });
        kernel.provide('scheduler', scheduler);
        await scheduler.start(abort.signal);
      },
      async stop() {
        abort.abort();
        await scheduler?.stop();
        await informers?.stopped();
      },
    });
  },
});
