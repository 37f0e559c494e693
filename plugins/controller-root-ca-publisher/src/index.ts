import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { clusterCaPem } from './ca.js';
import { RootCaPublisher } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** Publishes the cluster CA as the kube-root-ca.crt ConfigMap in every namespace. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  wants: ['apiServerInfo'],
  workers: 'Namespaces worked on at once',
  options: {
    caFile: {
      type: 'string',
      description: "The CA certificate (PEM) to publish; relative paths are taken from the data dir (default: the CA of this process's API server)",
    },
  },
  controllers: (options, kernel) => ({ [CONTROLLER_NAME]: (ctx) => new RootCaPublisher(ctx, clusterCaPem(kernel, options.caFile)) }),
});
export default plugin;

export type RootCaPublisherOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
