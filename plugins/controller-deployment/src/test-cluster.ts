import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient, SharedInformerFactory } from '@skiff/client';
import controllerManager from '@skiff/controller-manager';
import { RESOURCES, type Pod } from '@skiff/api';
import { Kernel, type ApiClient, type ApiHandler, type Logger, type SkiffPlugin } from '@skiff/kernel';
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
 * authorization, the controller manager — running `controllers`. Without `dataDir` the state lives in
 * a temporary folder removed by `stop`.
 */
export async function startControlPlane(controllers: SkiffPlugin<any>[], dataDir?: string): Promise<ControlPlane> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'skiff-deployment-'));
  const kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, port: 0, logLevel: 'error' } });
  kernel.use(store).use(apiServer, { port: 0 }).use(alwaysAllow).use(controllerManager, { resyncMs: 0 });
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

/** Pods with this label are never reported ready, like pods whose containers never start. */
export const NEVER_READY_LABEL = 'skiff.test/never-ready';

/**
 * Plays the kubelet for tests that need available pods: every pod that appears is reported Running and
 * Ready (as of now), except those labelled NEVER_READY_LABEL. Stops when `signal` aborts.
 */
export function reportPodsReady(client: ApiClient, logger: Logger, signal: AbortSignal): void {
  const factory = new SharedInformerFactory(client, { resyncMs: 0, logger });
  factory.informer<Pod>(RESOURCES.pods).addHandlers({
    add: (pod) => {
      if (pod.metadata.labels?.[NEVER_READY_LABEL] || pod.metadata.deletionTimestamp) return;
      if (pod.status?.conditions?.some((condition) => condition.type === 'Ready')) return;
      const lastTransitionTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const status = { phase: 'Running' as const, conditions: [{ type: 'Ready', status: 'True' as const, lastTransitionTime }] };
      client.updateStatus<Pod>(RESOURCES.pods, { ...structuredClone(pod), status }).catch((err) => logger.debug({ err }, 'pod gone before it was reported ready'));
    },
  });
  factory.start(signal);
}
