import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { NodeLifecycleController } from './controller.js';
import { CONTROLLER_NAME, DEFAULTS, PLUGIN_NAME } from './names.js';

/** The node lifecycle controller: node health from heartbeats, condition taints, and taint-based eviction. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Nodes whose condition taints are synced in parallel',
  options: {
    nodeMonitorPeriodSeconds: {
      type: 'number',
      minimum: 0.01,
      default: DEFAULTS.NODE_MONITOR_PERIOD_SECONDS,
      description: 'how often the health of every node is checked (kube-controller-manager --node-monitor-period)',
    },
    nodeMonitorGracePeriodSeconds: {
      type: 'number',
      minimum: 0.01,
      default: DEFAULTS.NODE_MONITOR_GRACE_PERIOD_SECONDS,
      description: 'how long a node may go without a heartbeat before its conditions become Unknown (--node-monitor-grace-period)',
    },
    nodeStartupGracePeriodSeconds: {
      type: 'number',
      minimum: 0.01,
      default: DEFAULTS.NODE_STARTUP_GRACE_PERIOD_SECONDS,
      description: 'the same for a node that has never posted a Ready condition, counted from its creation (--node-startup-grace-period)',
    },
    nodeEvictionRate: {
      type: 'number',
      minimum: 0,
      default: DEFAULTS.NODE_EVICTION_RATE,
      description: 'nodes per second given a NoExecute not-ready/unreachable taint in a healthy zone (--node-eviction-rate)',
    },
    secondaryNodeEvictionRate: {
      type: 'number',
      minimum: 0,
      default: DEFAULTS.SECONDARY_NODE_EVICTION_RATE,
      description: 'the same in a partly disrupted zone of more than largeClusterSizeThreshold nodes (--secondary-node-eviction-rate)',
    },
    largeClusterSizeThreshold: {
      type: 'integer',
      minimum: 0,
      default: DEFAULTS.LARGE_CLUSTER_SIZE_THRESHOLD,
      description: 'nodes a partly disrupted zone needs for the secondary rate; smaller ones get no NoExecute taints (--large-cluster-size-threshold)',
    },
    unhealthyZoneThreshold: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: DEFAULTS.UNHEALTHY_ZONE_THRESHOLD,
      description: 'share of not-ready nodes (at least three) that makes a zone partly disrupted (--unhealthy-zone-threshold)',
    },
  },
  controllers: (options) => ({
    [CONTROLLER_NAME]: (ctx) =>
      new NodeLifecycleController(ctx, {
        nodeMonitorPeriodMs: options.nodeMonitorPeriodSeconds * 1000,
        nodeMonitorGracePeriodMs: options.nodeMonitorGracePeriodSeconds * 1000,
        nodeStartupGracePeriodMs: options.nodeStartupGracePeriodSeconds * 1000,
        nodeEvictionRate: options.nodeEvictionRate,
        secondaryNodeEvictionRate: options.secondaryNodeEvictionRate,
        largeClusterSizeThreshold: options.largeClusterSizeThreshold,
        unhealthyZoneThreshold: options.unhealthyZoneThreshold,
      }),
  }),
});
export default plugin;

export type NodeLifecycleControllerPluginOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME, TAINT_KEY } from './names.js';
export { NodeLifecycleController, type NodeLifecycleSettings } from './controller.js';
