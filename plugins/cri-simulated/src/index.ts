import { definePlugin, type OptionsSchema, type RuntimeFactory } from '@skiff/kernel';
import { RUNTIME_NAME, PLUGIN_NAME } from './names.js';
import { SimulatedRuntime, type SimulatedRuntimeOptions } from './runtime.js';

export const optionsSchema: OptionsSchema = {
  type: 'object',
  properties: {
    startDelayMs: { type: 'integer', minimum: 0, default: 0, description: 'how long StartContainer takes' },
    pullDelayMs: { type: 'integer', minimum: 0, default: 0, description: 'how long PullImage takes' },
    failImages: { type: 'array', items: { type: 'string' }, default: [], description: 'images whose pulls fail with ErrImagePull' },
  },
};

/** The factory kubelets pick with `runtime: 'simulated'`: one in-memory runtime per node. */
export function simulatedRuntimeFactory(options: SimulatedRuntimeOptions): RuntimeFactory {
  return {
    name: RUNTIME_NAME,
    create: (node) => new SimulatedRuntime(options, node.logger.child({ runtime: RUNTIME_NAME })),
  };
}

/** Registers the simulated container runtime with the kubelet. */
export default definePlugin<SimulatedRuntimeOptions>({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.runtimes.tap(PLUGIN_NAME, (registry) => registry.register(simulatedRuntimeFactory(options)));
  },
});

export { SimulatedRuntime, type SimulatedRuntimeOptions } from './runtime.js';
export { RuntimeError, RUNTIME_ERRORS, type RuntimeErrorCode } from './errors.js';
export { normalizeImage, imageDigest, repoDigest } from './images.js';
export { PLUGIN_NAME, RUNTIME_NAME, RUNTIME_VERSION, CONTAINER_ROLE_LABEL } from './names.js';
