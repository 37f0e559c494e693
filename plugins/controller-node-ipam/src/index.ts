import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { NodeIpamController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
import { NodeRanges } from './range.js';

/** Hands each Node a pod range (`spec.podCIDR`) out of the cluster's. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Nodes given a range at once',
  options: {
    clusterCIDR: { type: 'string', default: '10.244.0.0/16', description: 'The pod range of the whole cluster (IPv4)' },
    nodeCIDRMaskSize: { type: 'integer', minimum: 1, maximum: 30, default: 24, description: 'The prefix length of each node’s range' },
  },
  controllers: (options) => {
    // Checked when the plugin loads, so a bad range stops the start with one line.
    const ranges = NodeRanges.fromOptions(options.clusterCIDR, options.nodeCIDRMaskSize);
    return { [CONTROLLER_NAME]: (ctx) => new NodeIpamController(ctx, ranges) };
  },
});
export default plugin;

export type NodeIpamOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
export { NodeIpamError, NODE_IPAM_ERRORS, type NodeIpamErrorCode } from './errors.js';
