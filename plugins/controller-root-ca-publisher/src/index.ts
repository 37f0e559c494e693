import { trackWork } from '@skiff/controller-manager';
import { definePlugin, type PluginOptions } from '@skiff/kernel';
import { clusterCaPem } from './ca.js';
import { RootCaPublisher } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** Publishes the cluster CA as the kube-root-ca.crt ConfigMap in every namespace. */
const plugin = definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: {
    type: 'object',
    properties: {
      caFile: {
        type: 'string',
        description: "The CA certificate (PEM) to publish; relative paths are taken from the data dir (default: the CA of this process's API server)",
      },
      workers: { type: 'integer', minimum: 1, description: "Namespaces worked on at once (default: the controller manager's workers)" },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({
        name: CONTROLLER_NAME,
        start(ctx) {
          const publisher = new RootCaPublisher(ctx, clusterCaPem(kernel, options.caFile));
          trackWork(ctx, publisher.run(options.workers ?? ctx.workers ?? 2));
        },
      });
    });
  },
});
export default plugin;

export type RootCaPublisherOptions = PluginOptions<typeof plugin>;

export { RootCaPublisher, holdsCertificate, CONFIG_MAPS, type ConfigMap } from './controller.js';
export { clusterCaPem } from './ca.js';
export { CONTROLLER_NAME, PLUGIN_NAME, ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from './names.js';
export { RootCaPublisherError, ROOT_CA_PUBLISHER_ERRORS, type RootCaPublisherErrorCode } from './errors.js';
