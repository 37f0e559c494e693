import { trackWork } from '@skiff/controller-manager';
import { definePlugin, type PluginOptions } from '@skiff/kernel';
import { NamespaceController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The namespace controller: empties a namespace being deleted, then removes its `kubernetes` finalizer. */
const plugin = definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  needs: ['resourceRegistry'],
  options: {
    type: 'object',
    properties: {
      workers: { type: 'integer', minimum: 1, description: "Namespaces worked on at once (default: the controller manager's workers)" },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({
        name: CONTROLLER_NAME,
        start(ctx) {
          // The API server's registry, asked at every pass, says which kinds a namespace can hold.
          const controller = new NamespaceController(ctx, kernel.resolve('resourceRegistry'));
          trackWork(ctx, controller.run(options.workers ?? ctx.workers ?? 2));
        },
      });
    });
  },
});
export default plugin;

export type NamespaceControllerOptions = PluginOptions<typeof plugin>;

export { NamespaceController } from './controller.js';
export { deleteContent, isEmpty, type ContentReport } from './content.js';
export { deletionConditions, mergeConditions, type NamespaceCondition } from './conditions.js';
export { contentResources, groupResource, type ContentResource } from './resources.js';
export { CONTROLLER_NAME, PLUGIN_NAME, NAMESPACE_FINALIZER } from './names.js';
export { NamespaceError, NAMESPACE_ERRORS, type NamespaceErrorCode } from './errors.js';
