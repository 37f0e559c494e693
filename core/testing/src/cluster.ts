import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCluster, type Kernel, type PluginSpec, type ApiClient } from '@skiff/kernel';
import { createClientFromKubeconfig } from '@skiff/client';

export interface TestClusterOptions {
  /** Plugins added to the preset: objects (your plugin under test), names, or `[plugin, options]`. */
  plugins?: PluginSpec[];
  /** Preset to start from. Default: dev. */
  preset?: string;
  nodes?: number;
  /** Keep state here instead of a fresh temporary folder (removed on stop only when temporary). */
  dataDir?: string;
  logLevel?: string;
}

export interface TestCluster {
  kernel: Kernel;
  /** An admin client over real HTTPS, like a user's. */
  client: ApiClient;
  kubeconfig: string;
  server: string;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Starts a whole Skiff cluster in this process on a free port, for plugin authors' tests:
 * `const cluster = await startTestCluster({ plugins: [myPlugin] })`, then drive it with `cluster.client`
 * or with kubectl and `cluster.kubeconfig`. Always `await cluster.stop()`.
 */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const temporary = !options.dataDir;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'skiff-test-'));
  const kernel = await createCluster({
    config: {
      preset: options.preset ?? 'dev',
      dataDir,
      port: 0,
      nodes: options.nodes ?? 1,
      logLevel: options.logLevel ?? 'warn',
      plugins: options.plugins ?? [],
    },
  });
  await kernel.start();
  const server = kernel.resolve('apiServerInfo').url;
  const kubeconfig = join(dataDir, 'admin.kubeconfig');
  const client = createClientFromKubeconfig(kubeconfig);
  return {
    kernel,
    client,
    kubeconfig,
    server,
    dataDir,
    async stop() {
      await kernel.stop();
      if (temporary) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
