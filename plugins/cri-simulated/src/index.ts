import { join } from 'node:path';
import { definePlugin, packageInfo, type RuntimeFactory } from '@skiff/kernel';
import { RUNTIME_DATA_FOLDER, RUNTIME_NAME, PLUGIN_NAME } from './names.js';
import { optionsSchema, type SimulatedRuntimeOptions } from './options.js';
import { SimulatedRuntime } from './runtime.js';

/**
 * The factory kubelets pick with `runtime: 'simulated'`: one in-memory runtime per node, with a folder in the
 * node's data folder for container logs the kubelet's log folder cannot take.
 */
function simulatedRuntimeFactory(options: SimulatedRuntimeOptions): RuntimeFactory {
  return {
    name: RUNTIME_NAME,
    create: (node) => new SimulatedRuntime(options, node.logger.child({ runtime: RUNTIME_NAME }), join(node.dataDir, RUNTIME_DATA_FOLDER)),
  };
}

/** Registers the simulated container runtime with the kubelet. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.runtimes.tap(PLUGIN_NAME, (registry) => registry.register(simulatedRuntimeFactory(options)));
  },
});

export type { SimulatedRuntimeOptions } from './options.js';
export {
  PLUGIN_NAME,
  RUNTIME_NAME,
  SIMULATE_RUN_MS_ANNOTATION,
  SIMULATE_EXIT_CODE_ANNOTATION,
  SIMULATE_EXEC_EXIT_CODE_ANNOTATION,
  SIMULATE_CPU_ANNOTATION,
  SIMULATE_MEMORY_ANNOTATION,
} from './names.js';
