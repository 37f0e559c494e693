import { definePlugin, packageInfo, type NodeInfo, type PluginOptions, type SchedulerPlugin } from '@skiff/kernel';

/** The npm package name: cluster configs name the plugin by it, and its hook tap carries it. */
export const PLUGIN_NAME = '{{package}}';

/** The scheduler framework plugin's name, as scheduler profiles list it (`plugins.score.enabled: [{ name, weight }]`). */
export const SCHEDULER_PLUGIN_NAME = '{{Name}}';

const MAX_NODE_SCORE = 100;

/**
 * A scheduler plugin: pods prefer nodes that carry a label (a cluster-wide preferred node affinity).
 * `score` gives a labelled node the full score and any other node none; the scheduler multiplies it by
 * the profile's weight and adds the other plugins' scores. With `required`, `filter` also rules unlabelled
 * nodes out, so a pod stays Pending rather than land elsewhere.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    required: ['label'],
    properties: {
      label: { type: 'string', description: 'the node label pods prefer' },
      value: { type: 'string', description: 'the value the label must have (default: any value)' },
      required: { type: 'boolean', default: false, description: 'rule out nodes without the label instead of only preferring the others' },
      weight: { type: 'number', minimum: 0, default: 1, description: 'the score weight when the scheduler profile names none' },
    },
  },
  apply(kernel, options) {
    // The scheduler calls the object's methods in its own loop over the nodes: no hook call per node.
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createSchedulerPlugin(options)));
  },
});

export default plugin;

/** The options `apply` receives, with defaults filled in. */
export type PreferredNodeOptions = PluginOptions<typeof plugin>;

/** The framework plugin the scheduler drives: filter and score over every node, for every pod. */
export function createSchedulerPlugin({ label, value, required, weight }: PreferredNodeOptions): SchedulerPlugin {
  const matches = (node: NodeInfo) => {
    const actual = node.node.metadata.labels?.[label];
    return actual !== undefined && (value === undefined || actual === value);
  };
  const wanted = value === undefined ? label : `${label}=${value}`;
  return {
    name: SCHEDULER_PLUGIN_NAME,
    defaultWeight: weight,
    filter(_state, _pod, node) {
      if (!required || matches(node)) return null;
      return { code: 'UnschedulableAndUnresolvable', reasons: [`node(s) didn't have label ${wanted}`] };
    },
    score(_state, _pod, node) {
      return matches(node) ? MAX_NODE_SCORE : 0;
    },
  };
}
