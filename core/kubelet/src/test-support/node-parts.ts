import { Kernel, type ContainerRuntime, type NodeContext, type PodNetwork, type SkiffPlugin, type VolumePlugin } from '@skiff/kernel';
import criSimulated, { RUNTIME_NAME, type SimulatedRuntimeOptions } from '@skiff/plugin-cri-simulated';
import networkIpam, { NETWORK_NAME } from '@skiff/plugin-network-ipam';
import volumesBuiltin from '@skiff/plugin-volumes-builtin';
import { collectNodePlugins } from '../plugin.js';
import { silentLogger } from './objects.js';

// A node's runtime, network and volume plugins for tests that drive the kubelet's parts directly, made as the
// kubelet makes them: the plugin applied to a kernel with its options, its registration created for the node.

function registered<O>(plugin: SkiffPlugin<O>, options: unknown = {}) {
  return collectNodePlugins(new Kernel({ config: { logLevel: 'silent' }, logger: silentLogger }).use(plugin, options));
}

function registration<T>(item: T | undefined, what: string): T {
  if (item === undefined) throw new Error(`${what} is not registered`);
  return item;
}

const node = (dataDir: string, index: number, logger = silentLogger): NodeContext => ({ nodeName: `node-${index + 1}`, index, dataDir, logger });

/** The simulated runtime of a node whose folder is `dataDir` (where it keeps logs the pod log folder cannot take). */
export async function simulatedRuntime(dataDir: string, options: Partial<SimulatedRuntimeOptions> = {}, logger = silentLogger): Promise<ContainerRuntime> {
  const factory = registration(registered(criSimulated, options).runtimes.get(RUNTIME_NAME), `runtime ${RUNTIME_NAME}`);
  return factory.create(node(dataDir, 0, logger));
}

/** The IPAM network of node `index` (subnet 10.244.<index + 1>.0/24), keeping its allocations under `dataDir`. */
export async function ipamNetwork(dataDir: string, index = 0): Promise<PodNetwork> {
  const factory = registration(registered(networkIpam).networks.get(NETWORK_NAME), `network ${NETWORK_NAME}`);
  return factory.create(node(dataDir, index));
}

/** The built-in volume plugins with the plugin's default options, fresh for each call. */
export function builtinVolumes(): VolumePlugin[] {
  return registered(volumesBuiltin).volumes.list();
}

/**
 * The runtime with some methods replaced, as a runtime with a bug or one that records its calls would have
 * them; the replacements call through to `runtime` itself.
 */
export function withMethods<T extends ContainerRuntime>(runtime: T, methods: Partial<ContainerRuntime>): T {
  return new Proxy(runtime, {
    get(target, property) {
      const replaced: unknown = Reflect.get(methods, property);
      if (typeof replaced === 'function') return replaced;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
