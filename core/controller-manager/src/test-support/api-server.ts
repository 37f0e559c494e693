import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient, writeKubeconfig } from '@skiff/client';
import { Kernel, type ApiClient } from '@skiff/kernel';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import store from '@skiff/store';

const ADMIN = { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] };

/** A real API server (LMDB store, HTTPS listener, allow-all) with no controller manager of its own. */
export interface TestApiServer {
  kernel: Kernel;
  /** Its admin, through the loopback transport. */
  client: ApiClient;
  url: string;
  /** Writes an admin kubeconfig for this API server (or for `server`, a relay in front of it) to `file`. */
  writeAdminKubeconfig(file: string, server?: string): void;
  stop(): Promise<void>;
}

export async function startApiServer(): Promise<TestApiServer> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cm-api-'));
  const kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, port: 0, logLevel: process.env.SKIFF_TEST_LOG ?? 'error' } });
  kernel.use(store).use(apiServer, { port: 0 }).use(alwaysAllow);
  await kernel.start();
  const handler = kernel.resolve('apiHandler');
  const { url, caPem } = kernel.resolve('apiServerInfo');
  return {
    kernel,
    client: createLoopbackClient(handler, ADMIN),
    url,
    writeAdminKubeconfig(file, server = url) {
      writeKubeconfig(file, { server, caPem, token: handler.issueLoopbackToken(ADMIN), userName: 'admin' });
    },
    async stop() {
      await kernel.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
