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

export { EndpointSliceController, SLICES_BY_SERVICE_INDEX, type EndpointSliceControllerSettings } from './controller.js';
export { ANNOTATION, CONTROLLER_NAME, DEFAULT_MAX_ENDPOINTS_PER_SLICE, EVENT_REASON, LABEL, MANAGED_BY, PLUGIN_NAME } from './names.js';
export {
  findPort,
  isIPv6Address,
  isPodReady,
  isSelectingService,
  isServiceIPSet,
  podEndpointsChanged,
  podIPs,
  selectorMatches,
  servicesForPodEvent,
  servicesSelecting,
  shouldPodBeInEndpoints,
  shouldSetHostname,
} from './pods.js';
export {
  addressTypesFor,
  endpointPorts,
  planSlices,
  podToEndpoint,
  portsKey,
  sliceLabels,
  type AddressType,
  type SlicePlan,
  type SlicePlanInput,
} from './slices.js';
export { formatTriggerTime, TriggerTimeTracker } from './trigger-time.js';
export { isNamespaceTerminating } from './namespace-terminating.js';
export { SliceExpectations } from './expectations.js';
export { EndpointSliceError, ENDPOINTSLICE_ERRORS, type EndpointSliceErrorCode } from './errors.js';
