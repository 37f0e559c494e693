import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { EndpointSliceController } from './controller.js';
import { CONTROLLER_NAME, DEFAULT_MAX_ENDPOINTS_PER_SLICE, MAX_ENDPOINTS_PER_SLICE_LIMIT, PLUGIN_NAME } from './names.js';

/** The EndpointSlice controller: discovery.k8s.io/v1 EndpointSlices that follow the pods of each Service. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Services synced in parallel',
  options: {
    maxEndpointsPerSlice: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_ENDPOINTS_PER_SLICE_LIMIT,
      description: `Endpoints per EndpointSlice at most (default ${DEFAULT_MAX_ENDPOINTS_PER_SLICE})`,
    },
  },
  controllers: (options) => ({
    [CONTROLLER_NAME]: (ctx) => new EndpointSliceController(ctx, { maxEndpointsPerSlice: options.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE }),
  }),
});
export default plugin;

export type EndpointSliceControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
