export const PLUGIN_NAME = '@skiff/plugin-metrics-server';

/** The API group and version served (upstream's metrics-server serves the same). */
export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';

/** Who the plugin reads Nodes and Pods as. */
export const METRICS_SERVER_USER = Object.freeze({ username: 'system:skiff:metrics-server', groups: ['system:masters', 'system:authenticated'] });

/** The APIService's priorities upstream's metrics-server manifest gives the group. */
export const GROUP_PRIORITY_MINIMUM = 100;
export const VERSION_PRIORITY = 100;
