import { assertCanI, createLoopbackClient, type SharedInformerFactory } from '@skiff/client';
import { definePlugin, LIFECYCLE_STAGE, packageInfo, type Kernel } from '@skiff/kernel';
import { nodeReady } from './builtin/node-ready.js';
import { buildProfiles, type ProfileConfig } from './framework/profile.js';
import { PluginRegistry } from './framework/registry.js';
import { PLUGIN_NAME, SCHEDULER_USER } from './names.js';
import { schedulerOptionsSchema } from './options.js';
import { createScheduler, type Scheduler } from './scheduler.js';
import { SchedulerThread, workerPlan } from './thread.js';
import { SchedulerError } from './errors.js';

declare module '@skiff/kernel' {
  interface Components {
    /** The running scheduler when it runs on the main thread (for tests and tools that wait on its queue). */
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
  needs: ['apiHandler'],
  options: schedulerOptionsSchema,
  apply(kernel, options) {
    let scheduler: Scheduler | undefined;
    let informers: SharedInformerFactory | undefined;
    let thread: SchedulerThread | undefined;
    let mainReason: string | undefined;
    const abort = new AbortController();
    const logger = kernel.logger.child({ component: 'scheduler' });
    // The worker loads its modules while the store and the API server start.
    kernel.lifecycle(`${PLUGIN_NAME} (thread)`, LIFECYCLE_STAGE.STORE - 50, {
      start() {
        const plan = options.thread === 'main' ? { reason: 'thread: main' } : workerPlan(kernel);
        if (!('file' in plan)) {
          mainReason = plan.reason;
          if (options.thread === 'worker') throw new SchedulerError('SKIFF_ERR_SCHEDULER_THREAD', { reason: plan.reason });
          return;
        }
        const data = {
          config: JSON.parse(JSON.stringify(kernel.config)) as Record<string, unknown>,
          plugins: plan.plugins,
          schedulerOptions: options as Record<string, unknown>,
        };
        thread = SchedulerThread.spawn(plan.file, data, logger);
      },
    });
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.SCHEDULER, {
      async start() {
        const configs: ProfileConfig[] = options.profiles?.length ? (options.profiles as ProfileConfig[]) : [{ schedulerName: options.schedulerName }];
        // Built here in any case, so a bad profile stops the start with its own message.
        const profiles = buildProfiles(collectSchedulerPlugins(kernel), configs, { percentageOfNodesToScore: options.percentageOfNodesToScore });
        const handler = kernel.resolve('apiHandler');
        const user = { username: SCHEDULER_USER, groups: ['system:authenticated'] };
        const client = createLoopbackClient(handler, user);
        await assertCanI(client, SCHEDULER_USER, { verb: 'create', group: '', resource: 'pods', subresource: 'binding' });
        if (thread) {
          await thread.connect(handler, user);
          logger.debug('scheduling in a worker thread');
          return;
        }
        logger.debug({ reason: mainReason }, 'scheduling on the main thread');
        ({ scheduler, informers } = createScheduler(client, profiles, logger));
        kernel.provide('scheduler', scheduler);
        await scheduler.start(abort.signal);
      },
      async stop() {
        abort.abort();
        await thread?.stop();
        await scheduler?.stop();
        await informers?.stopped();
      },
    });
  },
});
