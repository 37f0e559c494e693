import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient } from '@skiff/client';
import controllerManager from '@skiff/controller-manager';
import { Kernel, type ApiClient, type Logger, type SkiffConfig, type SkiffPlugin } from '@skiff/kernel';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import store from '@skiff/store';

export interface ControlPlane {
  kernel: Kernel;
  /** A cluster-admin client through the full request pipeline (in-process loopback). */
  client: ApiClient;
  dataDir: string;
  stop(): Promise<void>;
}

/** A plugin to load, alone or with its options: `myController` or `[kubelet, { heartbeatSeconds: 1 }]`. */
export type ControlPlanePlugin = SkiffPlugin<any> | readonly [SkiffPlugin<any>, Record<string, unknown>?];

export interface ControlPlaneOptions {
  /** Keep state here (kept after stop); default: a temporary folder removed by stop. */
  dataDir?: string;
  /** Controller names the controller manager runs (its `enabled` option). Default: all. */
  enabled?: string[];
  /**
   * Kernel config over the test defaults (port 0, logLevel "error"): `{ nodes: 2 }` for the number of
   * kubelets when you load one, `{ logLevel: 'silent' }` for a quiet test.
   */
  config?: Omit<SkiffConfig, 'preset' | 'plugins' | 'dataDir'>;
  /** Receives every log line instead of stderr, for tests that check what a plugin logs. */
  logger?: Logger;
}

/**
 * A real control plane in this process, for plugin authors' tests: LMDB store, API server on a free
 * port, allow-all authorization and the controller manager, plus `plugins` (your controllers, or a
 * scheduler, kubelet, runtime and network for nodes that run pods). Without a kubelet, pods stay
 * Pending unless the test plays the kubelet.
 */
export async function startControlPlane(plugins: readonly ControlPlanePlugin[], options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'skiff-control-plane-')));
  const removeDataDir = () => (options.dataDir ? Promise.resolve() : rm(dataDir, { recursive: true, force: true }));
  const kernel = new Kernel({ config: { port: 0, logLevel: 'error', ...options.config, dataDir, rootDir: dataDir }, logger: options.logger });
  try {
    kernel
      .use(store)
      .use(apiServer, { port: 0 })
      .use(alwaysAllow)
      .use(controllerManager, { resyncMs: 0, enabled: options.enabled ?? ['*'] });
    for (const entry of plugins) {
      const [plugin, pluginOptions] = Array.isArray(entry) ? entry : [entry as SkiffPlugin<any>];
      kernel.use(plugin, pluginOptions);
    }
    // A failed start stops what it started; the folder is ours to remove.
    await kernel.start();
  } catch (err) {
    await removeDataDir();
    throw err;
  }
  const client = createLoopbackClient(kernel.resolve('apiHandler'), {
    username: 'test-admin',
    groups: ['system:masters', 'system:authenticated'],
  });
  return {
    kernel,
    client,
    dataDir,
    async stop() {
      await kernel.stop();
      await removeDataDir();
    },
  };
}
