import { createCluster, Kernel, type ComponentName, type Components, type SkiffConfig, type SkiffPlugin } from '@skiff/kernel';

/** The components a store needs to read and write what the cluster wrote: the store, and the sealer of encryption at rest. */
const STORE_COMPONENTS: readonly ComponentName[] = ['store', 'storageSealer'];

/**
 * Options that suit a one-shot command on the known store plugins: compacting belongs to the cluster's own API
 * servers, not to a command that reads one snapshot or writes into an empty store.
 */
const ONE_SHOT_OPTIONS: Readonly<Record<string, Record<string, unknown>>> = Object.freeze({
  '@skiff/store': { compactionIntervalMs: 0 },
  '@skiff/plugin-store-etcd': { compactionIntervalMs: 0 },
});

export interface ClusterStore {
  kernel: Kernel;
  store: Components['store'];
  /** The name of the plugin that provides the store (`@skiff/store` is LMDB). */
  provider: string;
}

/**
 * The names of the plugins of `whole` that provide the store or the sealer, and of those they need, want or depend
 * on, as far as `whole` has them.
 */
export function storePlugins(whole: Kernel): Set<string> {
  const plugins = whole.listPlugins().map(({ plugin }) => plugin);
  const providerOf = (component: ComponentName) => plugins.find((plugin) => plugin.provides?.includes(component));
  const keep = new Set<string>();
  const visit = (plugin: SkiffPlugin<any> | undefined) => {
    if (!plugin || keep.has(plugin.name)) return;
    keep.add(plugin.name);
    for (const component of [...(plugin.needs ?? []), ...(plugin.wants ?? [])]) visit(providerOf(component));
    for (const dependency of plugin.dependencies ?? []) visit(plugins.find(({ name }) => name === dependency));
  };
  for (const component of STORE_COMPONENTS) visit(providerOf(component));
  return keep;
}

/**
 * A kernel of only the config's store and sealer plugins (loaded as `skiff up` loads the whole cluster: preset, config
 * file, flags), not started yet, so the caller can look at its config before anything is opened.
 */
export async function createStoreKernel(boot: { cwd: string; configFile?: string; overrides: SkiffConfig }): Promise<{ kernel: Kernel; provider: string }> {
  const whole = await createCluster(boot);
  const keep = storePlugins(whole);
  const provider = whole.listPlugins().find(({ plugin }) => plugin.provides?.includes('store'))?.plugin.name;
  if (!provider) throw new Error(`preset ${whole.config.preset} and its config have no plugin that provides the store`);
  const kernel = new Kernel({ config: whole.config });
  for (const { plugin, options } of whole.listPlugins()) {
    if (keep.has(plugin.name)) kernel.use(plugin, { ...{}, ...(options as object), ...ONE_SHOT_OPTIONS[plugin.name] });
  }
  return { kernel, provider };
}

/** Starts a kernel from createStoreKernel and hands its store; stop the kernel to close it. */
export async function openStore(kernel: Kernel, provider: string): Promise<ClusterStore> {
  await kernel.start();
  return { kernel, store: kernel.resolve('store'), provider };
}
