import { readFile } from 'node:fs/promises';
import type { EndpointSlice, Service } from '@skiff/api';
import { createLoopbackClient, SharedInformerFactory } from '@skiff/client';
import { definePlugin, hostAddress, packageInfo, type Kernel } from '@skiff/kernel';
import { Forwarder } from './forwarder.js';
import { DNS_STAGE, DNS_USER, ENDPOINT_SLICES, PLUGIN_NAME, SERVICES } from './names.js';
import { checkDnsOptions, nameserversOf, optionsSchema, type Upstream } from './options.js';
import { publishKubeDns } from './publish.js';
import { Responder } from './responder.js';
import { DnsServer } from './server.js';
import { ZoneIndex } from './zone.js';

/** What a running server shows tests and benchmarks (`dnsServerOf(kernel)`). */
export interface RunningDns {
  /** The listen address. */
  readonly address: string;
  /** The port (UDP and TCP). */
  readonly port: number;
  /** How many Services the index holds (it fills from informer events). */
  readonly services: number;
}

const running = new WeakMap<Kernel, RunningDns>();

/** The DNS server a kernel runs, once started. */
export function dnsServerOf(kernel: Kernel): RunningDns | undefined {
  return running.get(kernel.resolve('kernel'));
}

/**
 * Cluster DNS in the API server's process, in CoreDNS's place: the records of the Kubernetes DNS-Based
 * Service Discovery specification for the cluster domain, from Service and EndpointSlice informers, over UDP
 * and TCP; every other name forwarded to the upstream resolvers and cached. It publishes itself as the
 * Service kube-system/kube-dns (ClusterIP `serviceIP`) with one EndpointSlice naming its address and port.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiHandler'],
  options: optionsSchema,
  apply(kernel, options) {
    const checked = checkDnsOptions(options);
    const logger = kernel.logger.child({ component: PLUGIN_NAME });
    let abort: AbortController | undefined;
    let informers: SharedInformerFactory | undefined;
    let server: DnsServer | undefined;
    let forwarder: Forwarder | undefined;

    kernel.lifecycle(PLUGIN_NAME, DNS_STAGE, {
      async start() {
        const address = options.address === 'host' ? hostAddress(kernel.config.advertiseAddress) : options.address;
        const upstream = (checked.upstream ?? (await resolvConfServers(options.resolvConf))).filter(
          // Never forward to ourselves (a resolv.conf naming this server would loop).
          (server) => !(server.address === address && server.port === options.port && options.port !== 0),
        );
        if (upstream.length === 0) logger.warn({ resolvConf: options.resolvConf }, 'no upstream resolvers: names outside the cluster get SERVFAIL');

        const client = createLoopbackClient(kernel.resolve('apiHandler'), DNS_USER);
        const zone = new ZoneIndex({ domain: options.clusterDomain, ttl: options.ttl, serviceIP: options.serviceIP });
        forwarder = new Forwarder({
          upstream,
          cacheSize: options.cacheSize,
          maxCacheSeconds: options.maxCacheSeconds,
          timeoutMs: options.upstreamTimeoutMs,
          logger,
        });
        abort = new AbortController();
        informers = new SharedInformerFactory(client, { resyncMs: 0, logger });
        const services = informers.informer<Service>(SERVICES);
        const slices = informers.informer<EndpointSlice>(ENDPOINT_SLICES);
        services.addHandlers({
          add: (service) => zone.setService(service),
          update: (_old, service) => zone.setService(service),
          delete: (service) => zone.deleteService(service),
        });
        slices.addHandlers({
          add: (slice) => zone.setSlice(slice),
          update: (_old, slice) => zone.setSlice(slice),
          delete: (slice) => zone.deleteSlice(slice),
        });
        informers.start(abort.signal);
        await informers.waitForSync(abort.signal);

        checked.clients.addAddress(address, address.includes(':') ? 'ipv6' : 'ipv4');
        server = new DnsServer(new Responder(zone, forwarder, options.cacheSize), logger, checked.clients);
        await server.listen(address, options.port);
        const port = server.port;
        running.set(kernel.resolve('kernel'), {
          address,
          port,
          get services() {
            return zone.serviceCount;
          },
        });
        await publishKubeDns(client, options.serviceIP, address, server.port, logger);
        logger.info({ address, port: server.port, upstream: upstream.map((u) => `${u.address}:${u.port}`) }, 'cluster DNS serving');
      },
      async stop() {
        running.delete(kernel.resolve('kernel'));
        await server?.close();
        forwarder?.close();
        abort?.abort();
        await informers?.stopped().catch(() => undefined);
      },
    });
  },
});
export default plugin;

async function resolvConfServers(path: string): Promise<Upstream[]> {
  try {
    return nameserversOf(await readFile(path, 'utf8'));
  } catch {
    return [];
  }
}

export type { DnsOptions } from './options.js';
export { PLUGIN_NAME } from './names.js';
