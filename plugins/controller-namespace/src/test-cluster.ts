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
  /** A cluster-admin client through the full request pipeline. */
  client: ApiClient;
  stop(): Promise<void>;
}

/**
 * A real control plane in this process — LMDB store, API server on a free port, allow-all
 * authorization, the controller manager — running `controllers` (those `enabled` names). Without
 * `dataDir` the state lives in a temporary folder removed by `stop`.
 */
export async function startControlPlane(controllers: SkiffPlugin<any>[], options: { dataDir?: string; enabled?: string[] } = {}): Promise<ControlPlane> {
  const { dataDir, enabled = ['*'] } = options;
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'skiff-ns-'));
  const kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, port: 0, logLevel: 'error' } });
  kernel.use(store).use(apiServer, { port: 0 }).use(alwaysAllow).use(controllerManager, { resyncMs: 0, enabled });
  for (const controller of controllers) kernel.use(controller);
  await kernel.start();
  const client = createLoopbackClient(kernel.resolve<ApiHandler>('apiHandler'), { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
  return {
    kernel,
    client,
    async stop() {
      await kernel.stop();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns something other than undefined/false; fails after `timeoutMs` naming what was awaited. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let lastError: unknown;
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
