// The API server the HTTPS benchmarks measure: store, apiserver and the plugins a benchmark names, started
// in-process on a free port of 127.0.0.1, with one bearer token for a user in system:masters (the API server's
// own privileged-group authorizer lets that user do anything, so no authorizer is needed). Needs `npm run build`.
// bench/api-path.bench.mjs keeps its own copy of this setup: it runs it in an earlier checkout as well.
import { join } from 'node:path';
import { CHAIN_STAGE, definePlugin, Kernel } from '@skiff/kernel';
import storePlugin from '@skiff/store';
import apiServerPlugin from '@skiff/apiserver';

/** The bench clients' bearer token; `benchAuth` authenticates it as a member of system:masters. */
export const TOKEN = 'bench-token';

export const benchAuth = definePlugin({
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

function benchKernel(dataDir, workers, thread, workerStart = 'at-start') {
  return new Kernel({
    config: { dataDir: join(dataDir, 'skiff'), host: '127.0.0.1', port: 0, logLevel: 'silent', apiServer: { workers, workerStart } },
    thread,
    // An API server worker thread builds the same kernel with this module's default export.
    workerEntry: { module: import.meta.url, data: { dataDir, workers, workerStart } },
  });
}

/** The bench server's request path in an API server worker thread (`workers` > 1). */
export default async function benchWorkerKernel({ dataDir, workers, workerStart }, { thread }) {
  return benchKernel(dataDir, workers, thread, workerStart).use(storePlugin).use(apiServerPlugin).use(benchAuth);
}

/**
 * Starts the server with its data under `dataDir/skiff` (the caller makes and removes `dataDir`). `plugins` come
 * after store, apiserver and the token plugin, each a plugin or `[plugin, options]`; `store` replaces the LMDB store
 * (a plugin or `[plugin, options]`, e.g. the etcd store); `workers` serve the API on that many threads (config
 * apiServer.workers; the default store and plugins only), all from the start or, with `workerStart: 'on-demand'`, as
 * the load asks (config apiServer.workerStart). Answers the kernel, the
 * server's `url` and `caPem`, the in-process `handler` and `token`, `call(method, path, body, headers)` for an
 * in-process request with the token, and `stop()`.
 */
export async function startBenchApiServer({ plugins = [], dataDir, store = storePlugin, workers = 1, workerStart = 'at-start' }) {
  if (workers > 1 && (plugins.length > 0 || store !== storePlugin)) throw new Error('the bench server runs on several threads only with its own plugins');
  const kernel = benchKernel(dataDir, workers, undefined, workerStart);
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
