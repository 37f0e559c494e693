import { EventRecorderImpl, createLoopbackClient } from '@skiff/client';
import { definePlugin, LIFECYCLE_STAGE, packageInfo, type ApiClient, type PluginOptions } from '@skiff/kernel';
// The `store` component's type (declared by @skiff/store): whether other API servers share it.
import type {} from '@skiff/store';
import { advertisedAddress } from './address.js';
import { ServiceAllocator } from './allocator.js';
import { familyOf, ServiceCIDR } from './cidr.js';
import { ServiceAllocatorError } from './errors.js';
import { ServiceWritesInFlight } from './in-flight.js';
import { IPAddressClient } from './ip-addresses.js';
import { LeaseEndpointReconciler } from './endpoint-reconciler.js';
import { ensureKubernetesService, ensureServiceCIDR, readKubernetesEndpoints, writeKubernetesEndpoints } from './kubernetes-service.js';
import { APISERVER_USER, PLUGIN_NAME, SERVICE_ALLOCATION_STAGE, SERVICES } from './names.js';
import { PortRange } from './node-ports.js';
import { repair } from './repair.js';
import { splitServiceKey } from './service-spec.js';
import { isApiError, type Service } from '@skiff/api';

/** Starts after the API server serves (it writes through it) and before the controllers. */
const STAGE = LIFECYCLE_STAGE.API_SERVER + 50;

/**
 * ClusterIP and NodePort allocation for Services, as kube-apiserver 1.33+ does it: addresses recorded as
 * IPAddress objects out of the `kubernetes` ServiceCIDR, node ports from a range, both handed out in the
 * request path; a repair loop; and the `kubernetes` Service, whose Endpoints and EndpointSlice list the API
 * servers that hold an unexpired endpoint lease.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  provides: ['kubernetesServiceIPs'],
  needs: ['apiHandler', 'apiServerInfo'],
  wants: ['store'],
  options: {
    type: 'object',
    properties: {
      serviceCIDR: { type: 'string', default: '10.96.0.0/12', description: 'The IPv4 range cluster IPs come from (kube-apiserver --service-cluster-ip-range)' },
      serviceCIDRv6: { type: 'string', description: 'An IPv6 range as well, for dual-stack Services (prefix /64 or longer)' },
      nodePortRange: {
        type: 'string',
        default: '30000-32767',
        description: 'The node ports NodePort and LoadBalancer Services get (--service-node-port-range)',
      },
      repairIntervalMs: { type: 'integer', minimum: 100, default: 60_000, description: 'How often allocations are checked against the stored Services' },
      advertiseAddress: { type: 'string', description: "The address the kubernetes Service's endpoints name (default: the API server's listen address)" },
      endpointReconciler: {
        type: 'object',
        description: "How the kubernetes Service's endpoints are kept (kube-apiserver --endpoint-reconciler-type)",
        properties: {
          type: {
            type: 'string',
            enum: ['auto', 'lease', 'single', 'none'],
            default: 'auto',
            description:
              "'lease': every API server holds a Lease and the endpoints list the live ones; 'single': the endpoints list this API server alone, no lease; 'auto': 'lease' when the store is shared with other API servers (etcd), else 'single'; 'none': the endpoints are left alone",
          },
          leaseDurationSeconds: { type: 'integer', minimum: 1, default: 15, description: "How long an API server's endpoint lease lasts unrenewed" },
          renewIntervalSeconds: { type: 'integer', minimum: 1, default: 10, description: 'How often an API server renews its endpoint lease' },
          expiredLeaseGraceSeconds: {
            type: 'integer',
            minimum: 0,
            default: 60,
            description: 'How long an expired endpoint lease is kept before it is deleted',
          },
        },
      },
    },
  },
  apply(kernel, options) {
    const ranges = [rangeOption('serviceCIDR', options.serviceCIDR, 'IPv4')];
    if (options.serviceCIDRv6) ranges.push(rangeOption('serviceCIDRv6', options.serviceCIDRv6, 'IPv6'));
    let nodePorts: PortRange;
    try {
      nodePorts = PortRange.parse(options.nodePortRange);
    } catch (err) {
      throw new ServiceAllocatorError('SKIFF_ERR_SERVICE_ALLOCATOR_OPTION', { option: 'nodePortRange', detail: (err as Error).message });
    }
    if (options.advertiseAddress !== undefined && advertisedAddress(options.advertiseAddress) !== options.advertiseAddress)
      throw new ServiceAllocatorError('SKIFF_ERR_SERVICE_ALLOCATOR_OPTION', {
        option: 'advertiseAddress',
        detail: `want one IP address (got "${options.advertiseAddress}")`,
      });

    const reconcilerOptions = options.endpointReconciler;
    if (reconcilerOptions.renewIntervalSeconds >= reconcilerOptions.leaseDurationSeconds)
      throw new ServiceAllocatorError('SKIFF_ERR_SERVICE_ALLOCATOR_OPTION', {
        option: 'endpointReconciler.renewIntervalSeconds',
        detail: `must be less than leaseDurationSeconds (${reconcilerOptions.leaseDurationSeconds}), got ${reconcilerOptions.renewIntervalSeconds}`,
      });

    // In-cluster clients reach the API server at these addresses; its certificate must name them.
    kernel.hooks.components.tap(PLUGIN_NAME, () =>
      kernel.provide(
        'kubernetesServiceIPs',
        ranges.map((range) => range.at(0n)),
      ),
    );

    let allocator: ServiceAllocator | undefined;
    let client: ApiClient | undefined;
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    let timer: NodeJS.Timeout | undefined;
    let reconciler: LeaseEndpointReconciler | undefined;
    let tick: Promise<void> | undefined;
    const logger = kernel.logger.child({ component: PLUGIN_NAME });

    const settle = (namespace: string): void => {
      if (!allocator) return;
      const namespaces = namespace === '' ? allocator.touchedNamespaces() : [namespace];
      for (const quiet of namespaces) {
        if (inFlight.busy(quiet)) continue;
        allocator.settle(quiet).catch((err: unknown) => logger.warn({ err, namespace: quiet }, 'settling service allocations failed'));
      }
    };
    const inFlight = new ServiceWritesInFlight(settle, (service) => allocator?.written(service as Service));

    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: SERVICE_ALLOCATION_STAGE }, async (request) => {
      if (request.resource.group !== '' || request.resource.resource !== 'services' || request.subresource) return;
      // What this write takes and what it frees is settled once it is answered, written or refused.
      // (A request built by hand, without onFinished, is left to the repair loop.)
      if (request.onFinished) {
        inFlight.begin(request.namespace);
        // A delete answers with the Service as it was: nothing it holds is confirmed by that.
        const deleting = request.operation === 'DELETE';
        request.onFinished((outcome) => inFlight.end(request.namespace, deleting ? { succeeded: outcome.succeeded } : outcome));
      }
      await started;
      await allocator!.admit(request);
    });

    kernel.lifecycle(PLUGIN_NAME, STAGE, {
      async start() {
        client = createLoopbackClient(kernel.resolve('apiHandler'), APISERVER_USER);
        const api = client;
        const addresses = new IPAddressClient(api);
        const lookup = async (key: string): Promise<Service | undefined> => {
          const { namespace, name } = splitServiceKey(key);
          try {
            return await api.get<Service>(SERVICES, name, namespace);
          } catch (err) {
            if (isApiError(err, 'NotFound')) return undefined;
            throw err;
          }
        };
        allocator = new ServiceAllocator({ ranges, nodePorts, addresses, lookup, logger });
        const warning = await ensureServiceCIDR(api, ranges);
        if (warning) logger.warn(warning);
        const sources = {
          listServices: async () => (await api.list<Service>(SERVICES)).items,
          addresses,
          recorder: new EventRecorderImpl(api, { component: 'ipallocator-repair-controller', logger }),
          logger,
        };
        // An API server worker thread learns the allocations without deleting what it sees unowned at once: the primary
        // thread may be allocating it as the worker starts (as another API server may be).
        const { primary } = kernel.threads;
        await repair(allocator, sources, primary);
        ready();
        const info = kernel.resolve('apiServerInfo');
        const address = options.advertiseAddress ?? advertisedAddress(info.host);
        if (primary) await ensureKubernetesService(api, ranges[0]!, info.port);
        // One API server on a store of its own (LMDB) is the only one there can be: no lease to renew every few seconds.
        // Its worker threads are that one API server: the primary thread alone writes its endpoints.
        const shared = kernel.hasComponent('store') && kernel.resolve('store').shared === true;
        const type = !primary ? 'none' : reconcilerOptions.type === 'auto' ? (shared ? 'lease' : 'single') : reconcilerOptions.type;
        if (type === 'single') await writeKubernetesEndpoints(api, await readKubernetesEndpoints(api), [address], info.port, familyOf(address) ?? 'IPv4');
        if (type === 'lease') {
          const { leaseDurationSeconds, renewIntervalSeconds, expiredLeaseGraceSeconds } = reconcilerOptions;
          reconciler = new LeaseEndpointReconciler({
            client: api,
            address,
            port: info.port,
            leaseDurationSeconds,
            renewIntervalSeconds,
            expiredLeaseGraceSeconds,
            logger,
          });
          await reconciler.start();
        }

        const pass = async () => {
          const report = await repair(allocator!, sources, false);
          if (report.created.length || report.deleted.length || report.freedPorts.length) logger.info(report, 'service allocations repaired');
          if (primary) await ensureKubernetesService(api, ranges[0]!, info.port);
          settle('');
        };
        timer = setInterval(() => {
          tick ??= pass()
            .catch((err: unknown) => logger.warn({ err }, 'service allocation repair failed'))
            .finally(() => (tick = undefined));
        }, options.repairIntervalMs);
        timer.unref();
      },
      async stop() {
        clearInterval(timer);
        await tick;
        await reconciler?.stop().catch((err: unknown) => logger.warn({ err }, 'removing this API server from the kubernetes endpoints failed'));
      },
    });
  },
});
export default plugin;

function rangeOption(option: string, cidr: string, family: 'IPv4' | 'IPv6'): ServiceCIDR {
  let range: ServiceCIDR;
  try {
    range = new ServiceCIDR(cidr);
  } catch (err) {
    throw new ServiceAllocatorError('SKIFF_ERR_SERVICE_ALLOCATOR_OPTION', { option, detail: (err as Error).message });
  }
  if (range.family !== family)
    throw new ServiceAllocatorError('SKIFF_ERR_SERVICE_ALLOCATOR_OPTION', { option, detail: `want an ${family} range (got ${cidr})` });
  if (family === 'IPv6' && range.prefixLength < 64)
    throw new ServiceAllocatorError('SKIFF_ERR_SERVICE_ALLOCATOR_OPTION', {
      option,
      detail: `shortest allowed prefix length for service CIDR is 64, got ${range.prefixLength}`,
    });
  return range;
}

export type ServiceAllocatorOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME } from './names.js';
