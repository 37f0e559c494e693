import { createLoopbackClient, SharedInformerFactory } from '@skiff/client';
import type { FlowSchema, KubeObject, PriorityLevelConfiguration } from '@skiff/api';
import { definePlugin, LIFECYCLE_STAGE, packageInfo, type InformerHandlers, type PluginOptions } from '@skiff/kernel';
import { FlowController } from './controller.js';
import { serveDump } from './dump.js';
import { ensureConfiguration, MANDATORY_NAMES } from './ensure.js';
import { APF_USER, FLOW_SCHEMAS, PLUGIN_NAME, PRIORITY_LEVELS } from './names.js';
import { conditionsWith, danglingCondition } from './status.js';

/** After the API server listens (the plugin writes through it), before the controllers start sending requests. */
const STAGE = LIFECYCLE_STAGE.API_SERVER + 10;
/** How often the bootstrap configuration is checked besides when a mandatory object changes (kube-apiserver: each minute). */
const MAINTENANCE_INTERVAL_MS = 60_000;

/**
 * API Priority and Fairness: each request is classified by the FlowSchemas into a priority level and admitted through
 * that level's fair queues, or rejected with 429 and Retry-After. Keeps Kubernetes' mandatory and suggested
 * FlowSchemas and PriorityLevelConfigurations in the store, applies changes to them live, and marks FlowSchemas
 * whose priority level is missing as Dangling.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiHandler', 'apiExtensions'],
  options: {
    type: 'object',
    properties: {
      serverConcurrencyLimit: {
        type: 'integer',
        minimum: 1,
        default: 300,
        description:
          'Seats of the whole server, shared among the priority levels by their nominalConcurrencyShares (kube-apiserver: 600, the sum of --max-requests-inflight and --max-mutating-requests-inflight)',
      },
      queueWaitLimitSeconds: {
        type: 'number',
        minimum: 0.1,
        default: 15,
        description: 'How long a request may wait in its queue before it is rejected with 429 (kube-apiserver: a quarter of --request-timeout)',
      },
    },
  },
  apply(kernel, options) {
    const controller = new FlowController({ serverConcurrencyLimit: options.serverConcurrencyLimit, queueWaitLimitMs: options.queueWaitLimitSeconds * 1000 });
    const logger = kernel.logger.child({ component: PLUGIN_NAME });
    const abort = new AbortController();
    let informers: SharedInformerFactory | undefined;
    let timer: NodeJS.Timeout | undefined;
    let maintaining: Promise<void> | undefined;
    let maintainAgain = false;

    kernel.hooks.flowControl.tapPromise(PLUGIN_NAME, (request) => controller.admit(request));

    kernel.lifecycle(PLUGIN_NAME, STAGE, {
      async start() {
        serveDump(kernel.resolve('apiExtensions'), controller);
        const client = createLoopbackClient(kernel.resolve('apiHandler'), APF_USER);
        /** One ensure pass at a time; a request for another while one runs makes one more afterwards. */
        const maintain = (): void => {
          if (maintaining) {
            maintainAgain = true;
            return;
          }
          maintaining = ensureConfiguration(client, logger)
            .then((report) => {
              if (report.created.length || report.updated.length) logger.info(report, 'API Priority and Fairness bootstrap configuration maintained');
            })
            .catch((err: unknown) => logger.warn({ err }, 'maintaining the API Priority and Fairness bootstrap configuration failed'))
            .finally(() => {
              maintaining = undefined;
              if (maintainAgain && !abort.signal.aborted) {
                maintainAgain = false;
                maintain();
              }
            });
        };
        await ensureConfiguration(client, logger);

        informers = new SharedInformerFactory(client, { logger });
        const flowSchemas = informers.informer<FlowSchema>(FLOW_SCHEMAS);
        const levels = informers.informer<PriorityLevelConfiguration>(PRIORITY_LEVELS);
        let digestQueued = false;
        const patchingStatus = new Set<string>();
        /** Applies what the informers hold, once per burst of events, and brings the Dangling conditions up to date. */
        const digest = (): void => {
          if (digestQueued || !flowSchemas.hasSynced() || !levels.hasSynced()) return;
          digestQueued = true;
          setImmediate(() => {
            digestQueued = false;
            if (abort.signal.aborted) return;
            controller.configure(flowSchemas.list(), levels.list());
            for (const flowSchema of flowSchemas.list()) {
              const name = flowSchema.metadata.name!;
              const conditions = conditionsWith(
                flowSchema,
                danglingCondition(flowSchema, controller.hasLevel(flowSchema.spec.priorityLevelConfiguration.name), () => new Date().toISOString()),
              );
              if (!conditions || patchingStatus.has(name)) continue;
              patchingStatus.add(name);
              client
                .patch(FLOW_SCHEMAS, name, { status: { conditions } }, { subresource: 'status', patchType: 'merge' })
                .catch((err: unknown) => logger.warn({ err, flowSchema: name }, 'could not update the Dangling condition of a FlowSchema'))
                .finally(() => patchingStatus.delete(name));
            }
          });
        };
        // Any change is applied; a change to a mandatory object is also undone at once.
        const onChange =
          (resource: string) =>
          (object: KubeObject): void => {
            digest();
            if (MANDATORY_NAMES.has(`${resource}/${object.metadata.name}`)) maintain();
          };
        const watchMandatory = (resource: string): InformerHandlers => ({
          add: digest,
          update: (_old, object) => onChange(resource)(object),
          delete: onChange(resource),
        });
        flowSchemas.addHandlers(watchMandatory(FLOW_SCHEMAS.resource));
        levels.addHandlers(watchMandatory(PRIORITY_LEVELS.resource));
        informers.start(abort.signal);
        await informers.waitForSync(abort.signal);
        digest();
        timer = setInterval(maintain, MAINTENANCE_INTERVAL_MS);
        timer.unref();
      },
      async stop() {
        abort.abort();
        clearInterval(timer);
        controller.stop();
        await maintaining;
        await informers?.stopped();
      },
    });
  },
});
export default plugin;

/** The plugin's options, as `apply` receives them (defaults filled in). */
export type FlowControlApfOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME, AUTO_UPDATE_ANNOTATION, FLOW_SCHEMA_UID_HEADER, PRIORITY_LEVEL_UID_HEADER, DUMP_PRIORITY_LEVELS_PATH } from './names.js';
