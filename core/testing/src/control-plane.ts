import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient } from '@skiff/client';
import controllerManager from '@skiff/controller-manager';
import { Kernel, type ApiClient, type ApiHandler, type SkiffPlugin } from '@skiff/kernel';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import store from '@skiff/store';

export interface ControlPlane {
  kernel: Kernel;
  /** A cluster-admin client through the full request pipeline (in-process loopback). */
  client: ApiClient;
  dataDir: string;
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Keep state here (kept after stop); default: a temporary folder removed by stop. */
  dataDir?: string;
  /** Controller names the controller manager runs (its `enabled` option). Default: all. */
  enabled?: string[];
}

/**
 * A real control plane without nodes, for controller authors' tests: LMDB store, API server on a free
 * port, allow-all authorization and the controller manager, plus `plugins` (your controllers). Pods stay
 * Pending unless the test plays the kubelet.
 */
export async function startControlPlane(plugins: SkiffPlugin<any>[], options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'skiff-control-plane-'));
  const kernel = new Kernel({ config: { dataDir, rootDir: dataDir, port: 0, logLevel: 'error' } });
  kernel
    .use(store)
    .use(apiServer, { port: 0 })
    .use(alwaysAllow)
    .use(controllerManager, { resyncMs: 0, enabled: options.enabled ?? ['*'] });
  for (const plugin of plugins) kernel.use(plugin);
  await kernel.start();
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
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
