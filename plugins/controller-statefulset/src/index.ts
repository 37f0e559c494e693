import { trackWork } from '@skiff/controller-manager';
import { definePlugin, type PluginOptions } from '@skiff/kernel';
import { StatefulSetController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The StatefulSet controller: ordered, stable pod identities and PersistentVolumeClaims, rolling updates, status. */
const plugin = definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: {
    type: 'object',
    properties: {
      workers: { type: 'integer', minimum: 1, description: "StatefulSets synced in parallel (default: the controller manager's workers)" },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({
        name: CONTROLLER_NAME,
        start(ctx) {
          trackWork(ctx, new StatefulSetController(ctx).run(options.workers ?? ctx.workers ?? 2));
        },
      });
    });
  },
});
export default plugin;

export type StatefulSetControllerOptions = PluginOptions<typeof plugin>;

export { StatefulSetController } from './controller.js';
export { CONTROLLER_NAME, PLUGIN_NAME, LABEL, EVENT_REASON } from './names.js';
export {
  STATEFULSETS,
  CONTROLLER_REVISIONS,
  PERSISTENT_VOLUME_CLAIMS,
  type StatefulSet,
  type StatefulSetSpec,
  type StatefulSetStatus,
  type ControllerRevision,
} from './resources.js';
export { planStatefulSet, maxUnavailableOf, type Plan, type Action, type PlanInput } from './plan.js';
export { calculateStatus } from './status.js';
export { newRevision, revisionData, applyRevision } from './revisions.js';
