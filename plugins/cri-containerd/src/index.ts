import { definePlugin, packageInfo } from '@skiff/kernel';
import { PLUGIN_NAME } from './names.js';
import { optionsSchema } from './options.js';
import { containerdRuntimeFactory } from './runtime-factory.js';

/** Registers the containerd container runtime with the kubelet. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.runtimes.tap(PLUGIN_NAME, (registry) => registry.register(containerdRuntimeFactory(options)));
  },
});

export type { ContainerdRuntimeOptions } from './options.js';
export { PLUGIN_NAME, RUNTIME_NAME } from './names.js';
