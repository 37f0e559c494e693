// The API server the HTTPS benchmarks measure: store, apiserver and the plugins a benchmark names, started
// in-process on a free port of 127.0.0.1, with one bearer token for a user in system:masters (the API server's
// own privileged-group authorizer lets that user do anything, so no authorizer is needed). Needs `npm run build`.
// bench/api-path.bench.mjs keeps its own copy of this setup: it runs it in an earlier checkout as well.
import { join } from 'node:path';
import { CHAIN_STAGE, definePlugin, Kernel } from '@skiff/kernel';
import storePlugin from '@skiff/store';
import apiServerPlugin from '@skiff/apiserver';

const TOKEN = 'bench-token';

const benchAuth = definePlugin({
  name: 'bench-auth',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    const user = { username: 'bench', groups: ['system:masters', 'system:authenticated'] };
    kernel.hooks.authenticate.tap({ name: 'bench-auth', stage: CHAIN_STAGE.TOKEN }, (request) =>
      request.headers.authorization === `Bearer ${TOKEN}` ? { user } : undefined,
    );
  },
});

/**
 * Starts the server with its data under `dataDir/skiff` (the caller makes and removes `dataDir`). `plugins` come
 * after store, apiserver and the token plugin, each a plugin or `[plugin, options]`; `store` replaces the LMDB store
 * (a plugin or `[plugin, options]`, e.g. the etcd store). Answers the kernel, the
 * server's `url` and `caPem`, the in-process `handler` and `token`, `call(method, path, body, headers)` for an
 * in-process request with the token, and `stop()`.
 */
export async function startBenchApiServer({ plugins = [], dataDir, store = storePlugin }) {
  const kernel = new Kernel({ config: { dataDir: join(dataDir, 'skiff'), host: '127.0.0.1', port: 0, logLevel: 'silent' } });
  const [storeToUse, storeOptions] = Array.isArray(store) ? store : [store];
  kernel.use(storeToUse, storeOptions).use(apiServerPlugin).use(benchAuth);
  for (const entry of plugins) {
    const [plugin, options] = Array.isArray(entry) ? entry : [entry];
    kernel.use(plugin, options);
  }
  await kernel.start();
  const { url, caPem } = kernel.resolve('apiServerInfo');
  const handler = kernel.resolve('apiHandler');
  const call = (method, path, body, headers = {}) =>
    handler.handle({ method, path, query: {}, headers: { authorization: `Bearer ${TOKEN}`, ...headers }, body });
  return { kernel, url, caPem, handler, token: TOKEN, call, stop: () => kernel.stop() };
}
