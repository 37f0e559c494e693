import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { isIP } from 'node:net';
import type { UserInfo } from '@skiff/api';
import {
  createClient,
  createLoopbackClient,
  HttpsTransport,
  readKubeconfig,
  writeKubeconfig,
  type KubeconfigConnection,
  type SkiffClient,
} from '@skiff/client';
import {
  definePlugin,
  hostAddress,
  KernelError,
  LIFECYCLE_STAGE,
  packageInfo,
  type Kernel,
  type NetworkFactory,
  type RuntimeFactory,
  type ServiceProxyFactory,
  type VolumePlugin,
} from '@skiff/kernel';
import { KubeletError } from './errors.js';
import { Kubelet } from './kubelet.js';
import { PLUGIN_NAME } from './names.js';
import { kubeletOptionsSchema } from './options.js';
import { NameRegistry } from './registry.js';
import { NodeConnectionRegistry } from './streaming/node-connections.js';

/** Runs the runtimes, networks and volumes hooks once and returns the filled registries. */
export function collectNodePlugins(kernel: Kernel) {
  const runtimes = new NameRegistry<RuntimeFactory>('container runtime');
  const networks = new NameRegistry<NetworkFactory>('pod network');
  const volumes = new NameRegistry<VolumePlugin>('volume plugin');
  const serviceProxies = new NameRegistry<ServiceProxyFactory>('service proxy');
  kernel.hooks.runtimes.call(runtimes);
  kernel.hooks.networks.call(networks);
  kernel.hooks.volumes.call(volumes);
  kernel.hooks.serviceProxies.call(serviceProxies);
  return { runtimes, networks, volumes, serviceProxies };
}

/**
 * The kubelet component: runs `nodes` in-process nodes named <namePrefix>-1 … -N, each with the runtime
 * and network the options name, talking to the in-process API server as system:node:<name>. Each node
 * offers the API server its pods' logs, exec, attach and port-forward through `nodeConnections`.
 * With `kubeconfig` it runs one node (`nodeName`) that talks to that kubeconfig's API server with its
 * credentials instead: a node joined from another machine.
 */
export const kubeletPlugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  wants: ['apiHandler'],
  provides: ['nodeConnections'],
  options: kubeletOptionsSchema,
  apply(kernel, options) {
    if (options.nodeIP !== 'host' && !isIP(options.nodeIP))
      throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', {
        name: PLUGIN_NAME,
        detail: `option "nodeIP" must be an IP address or 'host' (got "${options.nodeIP}")`,
      });
    const kubelets: Kubelet[] = [];
    // Provided at once, so the API server can look nodes up whenever a request comes, whatever the start order.
    const connections = new NodeConnectionRegistry();
    kernel.provide('nodeConnections', connections);
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.KUBELET, {
      async start() {
        const remote = options.kubeconfig !== '';
        const count = remote ? 1 : (options.nodes ?? kernel.config.nodes);
        if (count === 0) return;
        const kubeconfig = remote ? readKubeconfig(resolve(kernel.config.rootDir, options.kubeconfig)) : undefined;
        const kubeconfigFile = resolve(kernel.config.rootDir, options.kubeconfig);
        const transport = kubeconfig ? kubeconfigTransport(kubeconfig, options.servers) : undefined;
        const connect = transport
          ? (
              (client) => () =>
                client
            )(createClient(transport))
          : loopbackConnection(kernel);
        // A joined node renews its client certificate: the new one goes to its kubeconfig and its connections.
        const credentials =
          kubeconfig?.certPem && transport
            ? {
                certPem: kubeconfig.certPem,
                update(certPem: string, keyPem: string) {
                  writeKubeconfig(kubeconfigFile, { server: kubeconfig.server, caPem: kubeconfig.caPem, certPem, keyPem, userName: kubeconfig.context });
                  transport.setClientCertificate(certPem, keyPem);
                },
              }
            : undefined;
        // A node whose API server runs elsewhere is reached over its HTTPS API, accepting the cluster CA's client certificates.
        const serve = kubeconfig?.caPem ? { address: options.address, port: options.port, clientCaPem: kubeconfig.caPem } : undefined;
        const { runtimes, networks, volumes, serviceProxies } = collectNodePlugins(kernel);
        const runtimeFactory = runtimes.get(options.runtime);
        if (!runtimeFactory) throw new KubeletError('SKIFF_ERR_KUBELET_RUNTIME_UNKNOWN', { name: options.runtime, known: runtimes.known() });
        const networkFactory = networks.get(options.network);
        if (!networkFactory) throw new KubeletError('SKIFF_ERR_KUBELET_NETWORK_UNKNOWN', { name: options.network, known: networks.known() });
        const serviceProxyFactory = options.serviceProxy ? serviceProxies.get(options.serviceProxy) : undefined;
        if (options.serviceProxy && !serviceProxyFactory)
          throw new KubeletError('SKIFF_ERR_KUBELET_SERVICE_PROXY_UNKNOWN', { name: options.serviceProxy, known: serviceProxies.known() });
        const nodeIP = options.nodeIP === 'host' ? hostAddress(kernel.config.advertiseAddress) : options.nodeIP;
        const logger = kernel.logger.child({ component: 'kubelet' });
        for (let index = 0; index < count; index++) {
          const nodeName = remote ? options.nodeName || hostname().toLowerCase() : `${options.namePrefix}-${index + 1}`;
          const kubelet = new Kubelet({
            nodeName,
            index,
            dataDir: resolve(kernel.config.rootDir, kernel.config.dataDir, 'nodes', nodeName),
            capacity: options.capacity,
            capacitySource: options.capacity.source,
            heartbeatSeconds: options.heartbeatSeconds,
            leaseDurationSeconds: options.leaseDurationSeconds,
            podResyncSeconds: options.podResyncSeconds,
            housekeepingSeconds: options.housekeepingSeconds,
            podsOnShutdown: options.podsOnShutdown,
            runtimeFactory,
            networkFactory,
            serviceProxyFactory,
            nodeIP,
            volumePlugins: volumes.list(),
            clusterDomain: options.clusterDomain,
            clusterDNS: options.clusterDNS,
            resolvConf: options.resolvConf,
            crashLoopBackoffBaseSeconds: options.crashLoopBackoffBaseSeconds,
            crashLoopBackoffMaxSeconds: options.crashLoopBackoffMaxSeconds,
            runtimePlugin: runtimes.pluginOf(options.runtime),
            networkPlugin: networks.pluginOf(options.network),
            serviceProxyPlugin: options.serviceProxy ? serviceProxies.pluginOf(options.serviceProxy) : undefined,
            connect,
            podCIDRSource: options.podCIDRSource,
            serve,
            credentials,
            podCIDRWaitSeconds: options.podCIDRWaitSeconds,
            hooks: kernel.hooks,
            logger,
            connections,
            metrics: kernel.resolve('metrics'),
          });
          kubelets.push(kubelet);
          await kubelet.start();
        }
      },
      async stop() {
        await Promise.all(kubelets.splice(0).map((kubelet) => kubelet.stop()));
      },
    });
  },
});

/** In-process nodes act as their own users through this process's API server. */
function loopbackConnection(kernel: Kernel): (user: UserInfo) => SkiffClient {
  if (!kernel.hasComponent('apiHandler')) throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_NEEDED', { name: PLUGIN_NAME, component: 'apiHandler' });
  const apiHandler = kernel.resolve('apiHandler');
  return (user) => createLoopbackClient(apiHandler, user);
}

/**
 * A joined node has one identity, its kubeconfig's: the node's client certificate. With `servers` it fails over
 * between the cluster's API servers.
 */
function kubeconfigTransport(kubeconfig: KubeconfigConnection, servers: readonly string[]): HttpsTransport {
  const { server, caPem, token, certPem, keyPem, insecureSkipTlsVerify } = kubeconfig;
  return new HttpsTransport({ server, servers, caPem, token, certPem, keyPem, insecureSkipTlsVerify });
}
