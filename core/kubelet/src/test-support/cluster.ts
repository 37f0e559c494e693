import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient } from '@skiff/client';
import { Kernel, type ApiClient, type ApiHandler, type SkiffPlugin } from '@skiff/kernel';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import leastAllocated from '@skiff/plugin-scheduler-least-allocated';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import scheduler from '@skiff/scheduler';
import store from '@skiff/store';
import kubelet from '../index.js';
import type { KubeletPluginOptions } from '../options.js';

export interface InProcessCluster {
  kernel: Kernel;
  /** An admin client through the in-process API server (full pipeline, no socket). */
  client: ApiClient;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * A real cluster in this process: LMDB store, API server (on a free port), allow-all authorization,
 * scheduler with resources-fit and least-allocated, and kubelets on the simulated runtime and IPAM.
 */
export async function startCluster(
  options: { dataDir?: string; nodes?: number; kubelet?: Partial<KubeletPluginOptions>; runtime?: Record<string, unknown>; extra?: SkiffPlugin<any>[] } = {},
): Promise<InProcessCluster> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'skiff-kubelet-cluster-')));
  const kernel = new Kernel({ config: { dataDir, rootDir: dataDir, port: 0, nodes: options.nodes ?? 2, logLevel: 'silent' } });
  kernel
    .use(store)
    .use(apiServer, { port: 0 })
    .use(alwaysAllow)
    .use(scheduler)
    .use(resourcesFit)
    .use(leastAllocated)
    .use(kubelet, { heartbeatSeconds: 1, ...options.kubelet })
    .use(criSimulated, options.runtime ?? {})
    .use(networkIpam);
  for (const plugin of options.extra ?? []) kernel.use(plugin);
  await kernel.start();
  const client = createLoopbackClient(kernel.resolve('apiHandler'), { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
  return {
    kernel,
    client,
    dataDir,
    async stop() {
      await kernel.stop();
    },
  };
}

export async function removeDataDir(dataDir: string): Promise<void> {
  await rm(dataDir, { recursive: true, force: true });
}

/** Polls until `check` returns something other than undefined/false; fails after the deadline with the last error. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
