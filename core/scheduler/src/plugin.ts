import { resolve } from 'node:path';
import {
  assertCanI,
  createClientFromKubeconfig,
  createLoopbackClient,
  leaderElectionOptionsProblem,
  runWhileLeading,
  type LeaderElector,
  type SharedInformerFactory,
  type SkiffClient,
} from '@skiff/client';
import { definePlugin, KernelError, LIFECYCLE_STAGE, packageInfo, type Kernel } from '@skiff/kernel';
import { nodeReady } from './builtin/node-ready.js';
import { buildProfiles, type ProfileConfig } from './framework/profile.js';
import { PluginRegistry } from './framework/registry.js';
import { PLUGIN_NAME, SCHEDULER_USER } from './names.js';
import { schedulerOptionsSchema, type SchedulerPluginOptions } from './options.js';
import { createScheduler, type Scheduler } from './scheduler.js';
import { SchedulerThread, workerPlan, type SchedulerConnection } from './thread.js';
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
 * system:kube-scheduler, or, with `kubeconfig`, through the API servers it names. With
 * `leaderElection.leaderElect` it schedules only while this copy holds the lease.
 */
export const schedulerPlugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  wants: ['apiHandler'],
  options: schedulerOptionsSchema,
  apply(kernel, options) {
    checkConnectionOptions(options);
    let scheduler: Scheduler | undefined;
    let informers: SharedInformerFactory | undefined;
    let thread: SchedulerThread | undefined;
    let mainReason: string | undefined;
    let elector: LeaderElector | undefined;
    let client: SkiffClient | undefined;
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
        thread = SchedulerThread.spawn(plan.file, data, logger, kernel.resolve('metrics'));
      },
    });
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.SCHEDULER, {
      async start() {
        const configs: ProfileConfig[] = options.profiles?.length ? (options.profiles as ProfileConfig[]) : [{ schedulerName: options.schedulerName }];
        // Built here in any case, so a bad profile stops the start with its own message.
        const profiles = buildProfiles(collectSchedulerPlugins(kernel), configs, { percentageOfNodesToScore: options.percentageOfNodesToScore });
        const connection = connect(kernel, options);
        client = connection.client;
        await assertCanI(client, connection.who, { verb: 'create', group: '', resource: 'pods', subresource: 'binding' });
        // Each term (one, without leader election) schedules afresh: new informers and queue, in the thread or here.
        const startScheduling = async (signal: AbortSignal) => {
          if (thread) {
            await thread.connect(connection.thread, signal);
            logger.debug('scheduling in a worker thread');
            return;
          }
          logger.debug({ reason: mainReason }, 'scheduling on the main thread');
          ({ scheduler, informers } = createScheduler(connection.client, profiles, logger, kernel.resolve('metrics')));
          kernel.provide('scheduler', scheduler, { replace: true });
          await scheduler.start(signal);
        };
        const stopScheduling = async () => {
          await thread?.disconnect();
          await scheduler?.stop();
          await informers?.stopped();
          scheduler = undefined;
          informers = undefined;
        };
        if (!options.leaderElection.leaderElect) return startScheduling(abort.signal);
        elector = runWhileLeading(client, options.leaderElection, { start: startScheduling, stop: stopScheduling }, logger.child({ leaderElection: true }));
      },
      async stop() {
        abort.abort();
        await elector?.stop();
        await thread?.stop();
        await scheduler?.stop();
        await informers?.stopped();
        client?.close();
      },
    });
  },
});

function checkConnectionOptions(options: SchedulerPluginOptions): void {
  const problem =
    (options.leaderElection.leaderElect && leaderElectionOptionsProblem(options.leaderElection)) ||
    (options.servers.length > 0 && !options.kubeconfig ? 'option "servers" needs "kubeconfig" (the servers share its CA and credentials)' : undefined);
  if (problem) throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: problem });
}

/**
 * The API server in this process (as system:kube-scheduler), or the kubeconfig's with its credentials; `thread` is how
 * a worker thread reaches the same one (it makes its own HTTPS client from the kubeconfig).
 */
function connect(kernel: Kernel, options: SchedulerPluginOptions): { client: SkiffClient; who: string; thread: SchedulerConnection } {
  if (options.kubeconfig) {
    const file = resolve(kernel.config.rootDir, options.kubeconfig);
    return {
      client: createClientFromKubeconfig(file, undefined, { servers: options.servers }),
      who: `the user of kubeconfig ${file}`,
      thread: { kubeconfig: file, servers: options.servers },
    };
  }
  if (!kernel.hasComponent('apiHandler')) throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_NEEDED', { name: PLUGIN_NAME, component: 'apiHandler' });
  const handler = kernel.resolve('apiHandler');
  const user = { username: SCHEDULER_USER, groups: ['system:authenticated'] };
  return { client: createLoopbackClient(handler, user), who: SCHEDULER_USER, thread: { handler, user } };
}
