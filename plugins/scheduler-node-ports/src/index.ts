import { definePlugin, packageInfo } from '@skiff/kernel';
import { createNodePorts } from './node-ports.js';
import { PLUGIN_NAME } from './names.js';

/** Registers the NodePorts filter with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createNodePorts()));
  },
});

export { createNodePorts } from './node-ports.js';
export { podHostPorts, UsedHostPorts, type HostPort } from './host-ports.js';
export { PLUGIN_NAME, NODE_PORTS, NODE_PORTS_REASON } from './names.js';
