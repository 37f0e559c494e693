import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import { definePlugin, gauge, hostAddress, KernelError, LIFECYCLE_STAGE, type ApiServerInfo, type Logger, type PluginOptions } from '@skiff/kernel';
import { bootstrapNamespaces } from './bootstrap.js';
import { serveTraces } from './debug/traces.js';
import { ApiServerError } from './errors.js';
import { CONNECTION_LIMIT_DEFAULTS, HttpServer } from './http/server.js';
import { writeKubeconfig } from '@skiff/client';
import { serverUrl } from './kubeconfig.js';
import { ensurePki, readClusterCa } from './pki.js';
import { builtinResources, registerBuiltinHandlers } from './kinds/index.js';
import { ApiServer, APISERVER_NAME } from './server.js';
import { KubeletClient } from './streaming/remote-node-client.js';
import { APISERVER_PACKAGE } from './package-info.js';
import { ApiServerWorkers, WORKER_IDLE_CHANNEL } from './workers.js';
import { IdleMemory } from './idle-memory.js';
import { PrimaryNodes, serveNodeRelay } from './streaming/node-relay.js';
import { errorMessage, type Node } from '@skiff/api';

const PLUGIN_NAME = APISERVER_NAME;

export type ApiServerPluginOptions = PluginOptions<typeof plugin>;

export type { ApiServerInfo } from '@skiff/kernel';

/** On a worker thread: tells the primary once it has had no open connection for `seconds` (the primary then stops it). */
function idleReporter(port: MessagePort | undefined, http: HttpServer, seconds: number): NodeJS.Timeout | undefined {
  if (!port) return undefined;
  let quietSince = performance.now();
  let told = false;
  return setInterval(() => {
    if (http.connectionCount > 0) {
      quietSince = performance.now();
      told = false;
    } else if (!told && performance.now() - quietSince >= seconds * 1000) {
      told = true;
      port.postMessage(true);
    }
  }, 1000).unref();
}

const plugin = definePlugin({
  ...{},
  ...APISERVER_PACKAGE,
  name: PLUGIN_NAME,
  provides: ['resourceRegistry', 'initializerRegistry', 'apiExtensions', 'apiHandler', 'apiServerInfo'],
  needs: ['store'],
  wants: ['nodeConnections', 'adminCredential', 'kubernetesServiceIPs'],
  options: {
    type: 'object',
    properties: {
      host: { type: 'string', description: 'Listen address (default: config.host)' },
      port: { type: 'integer', minimum: 0, maximum: 65535, description: 'Listen port, 0 for a free one (default: config.port)' },
      bootstrapNamespaces: {
        type: 'boolean',
        default: true,
        description: 'Create the system namespaces (default, kube-system, kube-public, kube-node-lease) when missing',
      },
      watchBookmarkIntervalMs: {
        type: 'integer',
        minimum: 10,
        default: 60_000,
        description: 'Interval of watch BOOKMARK events (to watches that allow bookmarks)',
      },
      resourceVersionWaitMs: { type: 'integer', minimum: 0, default: 3_000, description: 'How long a read of a future resourceVersion waits before a 504' },
      maxConnections: {
        type: 'integer',
        minimum: 1,
        description: 'Open client connections at most (default: the open-file limit less a quarter, at least 512, kept for the rest of the process)',
      },
      tlsHandshakeTimeoutMs: {
        type: 'integer',
        minimum: 100,
        default: CONNECTION_LIMIT_DEFAULTS.tlsHandshakeTimeoutMs,
        description: 'A connection that has not finished its TLS handshake this long after it was accepted is closed',
      },
      requestHeadersTimeoutMs: {
        type: 'integer',
        minimum: 100,
        default: CONNECTION_LIMIT_DEFAULTS.requestHeadersTimeoutMs,
        description: "A connection whose request's headers have not arrived this long after it opened (or after its previous request) is closed",
      },
      requestTimeoutMs: {
        type: 'integer',
        minimum: 100,
        default: CONNECTION_LIMIT_DEFAULTS.requestTimeoutMs,
        description: 'A request whose body has not fully arrived this long after it began is answered 408 (responses, watches included, are not limited)',
      },
      keepAliveTimeoutMs: {
        type: 'integer',
        minimum: 100,
        default: CONNECTION_LIMIT_DEFAULTS.keepAliveTimeoutMs,
        description: 'An idle keep-alive connection is closed after this long',
      },
      initializers: {
        type: 'array',
        default: [],
        description:
          'Initializers cleared by controllers of your own: each { name (dotted, "podimage.example.com"), resources ("pods", "deployments.apps") }; a new object of those resources stays hidden until its entry is removed',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$' },
            resources: { type: 'array', items: { type: 'string', pattern: '^[a-z0-9]+(\\.[a-z0-9.-]+)?$' } },
          },
          required: ['name', 'resources'],
        },
      },
      workerIdleSeconds: {
        type: 'integer',
        minimum: 1,
        default: 30,
        description: 'With apiServer.workerStart "on-demand": a worker thread with no open connection for this long is stopped',
      },
      workerIdleCores: {
        type: 'number',
        minimum: 0,
        default: 0.5,
        description:
          'With apiServer.workerStart "on-demand": how many cores of the machine must stand idle while the primary is saturated to start a worker thread',
      },
      returnIdleMemory: {
        type: 'boolean',
        default: true,
        description: 'After a burst of requests, once the thread is idle, run two full garbage collections so the heap the burst grew is given back',
      },
      maxRequestHeaderBytes: {
        type: 'integer',
        minimum: 1024,
        default: CONNECTION_LIMIT_DEFAULTS.maxRequestHeaderBytes,
        description: 'The request line (URL) and headers together at most; a larger request gets a 431 Status',
      },
    },
  },
  apply(kernel, options) {
    if (options.requestHeadersTimeoutMs > options.requestTimeoutMs)
      throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', {
        name: PLUGIN_NAME,
        detail: `requestHeadersTimeoutMs (${options.requestHeadersTimeoutMs}) must not be longer than requestTimeoutMs (${options.requestTimeoutMs})`,
      });
    let server: ApiServer | undefined;
    let http: HttpServer | undefined;
    let info: ApiServerInfo | undefined;
    let kubelets: KubeletClient | undefined;
    let workers: ApiServerWorkers | undefined;
    let idleMemory: IdleMemory | undefined;
    let reportIdle: NodeJS.Timeout | undefined;
    let logger: Logger = kernel.logger;
    const { threads } = kernel;

    kernel.hooks.components.tap(PLUGIN_NAME, () => {
      logger = kernel.logger.child({ component: 'apiserver' });
      server = new ApiServer({
        hooks: kernel.hooks,
        logger,
        tracer: kernel.tracer,
        bookmarkIntervalMs: options.watchBookmarkIntervalMs,
        resourceVersionWaitMs: options.resourceVersionWaitMs,
        metrics: kernel.resolve('metrics'),
        thread: threads.index,
      });
      kernel.provide('resourceRegistry', server.registry);
      kernel.provide('initializerRegistry', server.initializers);
      kernel.provide('apiExtensions', server.extensions);
      serveTraces(server.extensions, kernel.tracer);
    });

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER, {
      async start() {
        const api = server!;
        for (const definition of builtinResources()) api.registry.register(definition);
        const dataDir = resolve(kernel.config.rootDir ?? process.cwd(), kernel.config.dataDir);
        // Kubelets of other processes, and every kubelet through nodes/proxy, are reached over HTTPS with a client certificate
        // from the cluster CA (made by ensurePki below).
        const remoteKubelets = (kubelets = new KubeletClient(() => readClusterCa(dataDir)));
        // A worker thread reaches the kubelets of the primary thread (logs, exec, attach, port-forward) through it.
        const nodesChannel = `${PLUGIN_NAME}/nodes`;
        const nodesPort = threads.primary ? undefined : threads.port(nodesChannel);
        const primaryNodes = nodesPort && new PrimaryNodes(nodesPort);
        if (threads.primary && threads.count > 1) ApiServerWorkers.serveIdleReports(kernel, () => workers);
        if (threads.primary && threads.count > 1)
          threads.serve(nodesChannel, (port) =>
            serveNodeRelay(port, () => (kernel.hasComponent('nodeConnections') ? kernel.resolve('nodeConnections') : undefined)),
          );
        const nodes = {
          // The kubelet provides `nodeConnections`, possibly after the API server starts: looked up per request.
          local: (node: string) => (kernel.hasComponent('nodeConnections') ? kernel.resolve('nodeConnections').get(node) : primaryNodes?.get(node)),
          remote: (node: Node) => remoteKubelets.connection(node),
        };
        api.extensions.nodes = nodes;
        registerBuiltinHandlers(api.handlers, nodes, remoteKubelets);
        kernel.hooks.resources.call(api.registry);
        for (const { name, resources } of options.initializers) {
          for (const resource of resources) {
            const dot = resource.indexOf('.');
            api.initializers.register(dot < 0 ? { name, group: '', resource } : { name, group: resource.slice(dot + 1), resource: resource.slice(0, dot) });
          }
        }
        kernel.hooks.initializers.call(api.initializers);
        api.start(kernel.resolve('store'));

        const host = options.host ?? kernel.config.host;
        // In-cluster clients dial the kubernetes Service's cluster IP; on every interface, pods and other machines the advertised address.
        const extraIps = [
          ...(kernel.hasComponent('kubernetesServiceIPs') ? kernel.resolve('kubernetesServiceIPs') : []),
          ...(host === '0.0.0.0' || host === '::' ? [hostAddress(kernel.config.advertiseAddress)] : []),
        ];
        const pki = ensurePki(dataDir, host, extraIps);
        const { maxConnections, tlsHandshakeTimeoutMs, requestHeadersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxRequestHeaderBytes } = options;
        http = new HttpServer({
          handler: api,
          logger,
          tls: { key: pki.keyPem, cert: pki.certPem, ca: pki.caPem },
          connections: { maxConnections, tlsHandshakeTimeoutMs, requestHeadersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxRequestHeaderBytes },
        });
        let port: number;
        try {
          // A worker thread accepts on its copy of the primary's listening socket.
          const fd = threads.primary ? undefined : (threads.data.listenFd as number);
          port = await http.listen(host, options.port ?? kernel.config.port, fd);
        } catch (err) {
          throw new ApiServerError(
            'SKIFF_ERR_APISERVER_LISTEN',
            { address: `${host}:${options.port ?? kernel.config.port}`, detail: errorMessage(err) },
            { cause: err },
          );
        }
        const url = serverUrl(host, port);
        api.serverAddress = url.slice('https://'.length);
        info = { url, host, port, caPem: pki.caPem, caFile: pki.caFile, caKeyFile: pki.caKeyFile };
        kernel.provide('apiHandler', api);
        kernel.provide('apiServerInfo', info);
        if (options.returnIdleMemory)
          idleMemory = new IdleMemory((pauseMs) => logger.debug({ pauseMs: Math.round(pauseMs) }, 'idle after a burst: heap collected'));
        if (!threads.primary) {
          reportIdle = idleReporter(threads.port(WORKER_IDLE_CHANNEL), http, options.workerIdleSeconds);
          return;
        }
        if (options.bootstrapNamespaces) await bootstrapNamespaces(api, logger);
        if (threads.count > 1) {
          gauge(kernel.resolve('metrics'), {
            name: 'skiff_apiserver_threads',
            help: 'API server threads serving now, the primary included, and the most that may (apiServer.workers).',
            labelNames: ['state'],
            collect() {
              this.set({ state: 'serving' }, 1 + (workers?.size ?? 0));
              this.set({ state: 'max' }, threads.count);
            },
          });
          workers = await ApiServerWorkers.start(kernel, http.listenFd, logger, {
            mode: kernel.config.apiServer?.workerStart ?? 'on-demand',
            idleCores: options.workerIdleCores,
          });
        }
        logger.info({ url, maxConnections: http.limits.maxConnections, threads: threads.count }, 'API server listening');
      },
      async stop() {
        await workers?.stop();
        workers = undefined;
        idleMemory?.stop();
        if (reportIdle) clearInterval(reportIdle);
        idleMemory = undefined;
        server?.stop();
        await http?.close();
        kubelets?.close();
      },
    });

    kernel.hooks.ready.tapPromise(PLUGIN_NAME, async () => {
      if (!info || !threads.primary) return;
      const file = resolve(kernel.config.rootDir ?? process.cwd(), kernel.config.dataDir, 'admin.kubeconfig');
      const credential = kernel.hasComponent('adminCredential') ? kernel.resolve('adminCredential') : undefined;
      writeKubeconfig(file, {
        server: info.url,
        caPem: info.caPem,
        token: credential?.token,
        certPem: credential?.certPem,
        keyPem: credential?.keyPem,
        userName: 'admin',
      });
      logger.info({ kubeconfig: file }, 'admin kubeconfig written');
    });
  },
});
export default plugin;
