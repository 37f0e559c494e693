import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { EndpointSliceMirroringController } from './controller.js';
import { CONTROLLER_NAME, DEFAULT_MAX_ENDPOINTS_PER_SUBSET, MAX_ENDPOINTS_PER_SLICE_LIMIT, PLUGIN_NAME } from './names.js';

/** The EndpointSlice mirroring controller: EndpointSlices for Services without a selector, from their custom Endpoints. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Endpoints mirrored in parallel',
  options: {
    maxEndpointsPerSubset: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_ENDPOINTS_PER_SLICE_LIMIT,
      description: `Addresses of one Endpoints subset mirrored at most (default ${DEFAULT_MAX_ENDPOINTS_PER_SUBSET})`,
    },
  },
  controllers: (options) => ({
    [CONTROLLER_NAME]: (ctx) =>
      new EndpointSliceMirroringController(ctx, { maxEndpointsPerSubset: options.maxEndpointsPerSubset ?? DEFAULT_MAX_ENDPOINTS_PER_SUBSET }),
  }),
});
export default plugin;

export type EndpointSliceMirroringControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
