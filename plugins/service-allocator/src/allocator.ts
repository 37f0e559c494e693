import { errorMessage, errors, RESOURCES, type Service, type StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { isAdmissionFor, type AdmissionRequest, type Logger } from '@skiff/kernel';
import { isIPFamily, type IPFamily, type ServiceCIDR } from './cidr.js';
import { ClusterIPAllocator, ClusterIPError, type ServiceLookup } from './cluster-ips.js';
import type { Holding } from './holdings.js';
import type { IPAddressClient } from './ip-addresses.js';
import { NodePortAllocator, NodePortError, type PortRange } from './node-ports.js';
import {
  clusterIPUpdateErrors,
  dropTypeDependentFields,
  heldIPs,
  heldPorts,
  initIPFamilies,
  needsClusterIP,
  needsHealthCheckNodePort,
  needsNodePorts,
  normalizeClusterIPs,
  patchAllocatedValues,
  serviceKey,
  splitServiceKey,
} from './service-spec.js';

type Rollback = () => Promise<unknown> | unknown;

export interface ServiceAllocatorOptions {
  /** The service ranges, the primary family first (at most one per family). */
  ranges: ServiceCIDR[];
  nodePorts: PortRange;
  addresses: IPAddressClient;
  /** Reads a stored Service outside a request (settling, repair). */
  lookup: ServiceLookup;
  logger: Logger;
}

/**
 * Cluster IPs and node ports for Services, handed out in the request that creates or updates a Service
 * (mutating admission), so the stored object and the response carry them. What a request hands out is
 * `pending` until the Service is read back holding it; `settle` frees what a finished request did not
 * keep (a failed create, a released port, a deleted Service), and the repair loop what no request settled.
 */
export class ServiceAllocator {
  readonly clusterIPs: ReadonlyMap<IPFamily, ClusterIPAllocator>;
  readonly families: IPFamily[];
  readonly nodePorts: NodePortAllocator;
  /** Services touched by a request, by namespace, to settle once no request on services there is in flight. */
  private readonly touched = new Map<string, Set<string>>();
  /** What the last successful write of each Service answered it holds, with its resourceVersion. */
  private readonly lastWritten = new Map<string, { revision: number; values: Set<string> }>();

  constructor(private readonly options: ServiceAllocatorOptions) {
    this.families = options.ranges.map((range) => range.family);
    this.clusterIPs = new Map(options.ranges.map((range) => [range.family, new ClusterIPAllocator(range, options.addresses)]));
    this.nodePorts = new NodePortAllocator(options.nodePorts);
  }

  /** The cluster IP allocator of a family (`spec.ipFamilies` entry, or an address's family), if this cluster serves it. */
  clusterIPsOf(family: string | undefined): ClusterIPAllocator | undefined {
    return isIPFamily(family) ? this.clusterIPs.get(family) : undefined;
  }

  /** The admission step for a Service create, update or delete. May change `request.object`. */
  async admit(request: AdmissionRequest): Promise<void> {
    const key = serviceKey(request.namespace, request.name);
    this.touch(key);
    if (request.operation === 'DELETE') {
      this.lastWritten.delete(key);
      return;
    }
    if (!isAdmissionFor(request, 'services')) return;
    const service = request.object;
    if (!service || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return;
    const old = request.oldObject;
    // A create of a name that is taken fails with AlreadyExists after admission: nothing to hand out.
    if (!old && (await request.get(RESOURCES.services, request.namespace, request.name))) return;
    const lookup: ServiceLookup = async (other) => {
      const { namespace, name } = splitServiceKey(other);
      // The store answers what is stored under services: a Service.
      return (await request.get(RESOURCES.services, namespace, name)) as Service | undefined;
    };
    await this.allocate(service, old, key, lookup, request.dryRun);
  }

  /** Fills in and takes the cluster IPs and node ports of `service` (`old` on updates); 422 when it cannot. */
  async allocate(service: Service, old: Service | undefined, key: string, lookup: ServiceLookup, dryRun = false): Promise<void> {
    const spec = (service.spec ??= {});
    normalizeClusterIPs(spec, old?.spec);
    if (old) {
      dropTypeDependentFields(service, old);
      patchAllocatedValues(service, old);
    }
    if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
    const name = service.metadata.name ?? '';
    const causes = [...initIPFamilies(service, old, this.families), ...(old ? clusterIPUpdateErrors(service, old) : [])];
    if (causes.length > 0) throw invalid(name, causes);
    const rollbacks: Rollback[] = [];
    try {
      await this.allocateClusterIPs(service, old, key, lookup, dryRun, rollbacks);
      await this.allocateNodePorts(service, old, key, lookup, dryRun, rollbacks);
    } catch (err) {
      for (const rollback of rollbacks.reverse()) await rollback();
      throw err;
    }
  }

  private async allocateClusterIPs(service: Service, old: Service | undefined, key: string, lookup: ServiceLookup, dryRun: boolean, rollbacks: Rollback[]) {
    if (!needsClusterIP(service)) return;
    const spec = service.spec!;
    const ips = (spec.clusterIPs ??= []);
    const kept = new Set(heldIPs(old));
    for (const [i, family] of (spec.ipFamilies ?? []).entries()) {
      const allocator = this.clusterIPsOf(family)!;
      const requested = ips[i] ?? '';
      if (requested && kept.has(requested)) continue;
      try {
        if (dryRun) {
          if (requested) allocator.checkRange(requested);
          else ips[i] = allocator.peekNext();
          continue;
        }
        const holding = requested ? await allocator.allocate(requested, key, lookup) : await allocator.allocateNext(key);
        rollbacks.push(() => allocator.release(holding));
        ips[i] = holding.value;
      } catch (err) {
        if (!(err instanceof ClusterIPError)) throw err;
        if (!requested) throw errors.internal(`failed to allocate a serviceIP: ${err.message}`);
        throw invalid(service.metadata.name ?? '', [fieldErrors.invalid('spec.clusterIPs', ips, `failed to allocate IP ${requested}: ${err.message}`)]);
      }
    }
    spec.clusterIP = ips[0];
  }

  private async allocateNodePorts(service: Service, old: Service | undefined, key: string, lookup: ServiceLookup, dryRun: boolean, rollbacks: Rollback[]) {
    const spec = service.spec!;
    const kept = new Set(heldPorts(old));
    const name = service.metadata.name ?? '';
    /** Takes a requested port; `failure` words the error the client sees. */
    const take = async (port: number, failure: (err: NodePortError) => Error): Promise<void> => {
      if (kept.has(port)) return;
      try {
        if (dryRun) return this.nodePorts.check(port, key);
        const holding = await this.allocatePort(port, key, lookup);
        rollbacks.push(() => this.nodePorts.release(holding));
      } catch (err) {
        throw err instanceof NodePortError ? failure(err) : err;
      }
    };
    const atField = (field: string, port: number) => (err: NodePortError) => invalid(name, [fieldErrors.invalid(field, port, err.message)]);
    const next = (): number => {
      try {
        if (dryRun) return this.nodePorts.peekNext();
        const holding = this.nodePorts.allocateNext(key);
        rollbacks.push(() => this.nodePorts.release(holding));
        return holding.value;
      } catch (err) {
        throw errors.internal(`failed to allocate a nodePort: ${errorMessage(err)}`);
      }
    };

    if (needsNodePorts(service)) {
      const ports = spec.ports ?? [];
      const allocateNew = spec.type === 'NodePort' || spec.allocateLoadBalancerNodePorts !== false;
      // Ports with the same number (TCP and UDP 53) share one node port, as upstream allocates them.
      const byServicePort = new Map<number | undefined, number>();
      for (const [i, port] of ports.entries()) {
        if (!port.nodePort && !allocateNew) continue;
        const field = `spec.ports[${i}].nodePort`;
        const assigned = byServicePort.get(port.port);
        if (assigned === undefined) {
          const requested = port.nodePort || ports.find((other) => other.port === port.port && other.nodePort)?.nodePort;
          if (requested) await take(requested, atField(field, requested));
          port.nodePort = requested || next();
          byServicePort.set(port.port, port.nodePort);
        } else if (!port.nodePort) {
          port.nodePort = assigned;
        } else if (port.nodePort !== assigned) {
          await take(port.nodePort, atField(field, port.nodePort));
        }
      }
    }
    if (needsHealthCheckNodePort(service)) {
      const requested = spec.healthCheckNodePort;
      if (!requested) spec.healthCheckNodePort = next();
      else await take(requested, (err) => errors.internal(`failed to allocate requested HealthCheck NodePort ${requested}: ${err.message}`));
    }
  }

  /**
   * Takes a requested node port. A port recorded for another Service that was settled as stored is
   * checked once more against the store: a Service deleted or changed a moment ago may not be settled yet.
   */
  private async allocatePort(port: number, key: string, lookup: ServiceLookup): Promise<Holding<number>> {
    try {
      return this.nodePorts.allocate(port, key);
    } catch (err) {
      const holder = this.nodePorts.holdings.get(port);
      if (!(err instanceof NodePortError) || err.kind !== 'allocated' || !holder || holder.state !== 'held') throw err;
      const stored = await lookup(holder.key);
      if (heldPorts(stored).includes(port)) throw err;
      this.nodePorts.release(holder);
      return this.nodePorts.allocate(port, key);
    }
  }

  /** Notes that a request touched the Service `key`, so its namespace is settled when quiet. */
  touch(key: string): void {
    const { namespace } = splitServiceKey(key);
    let keys = this.touched.get(namespace);
    if (!keys) this.touched.set(namespace, (keys = new Set()));
    keys.add(key);
  }

  /** Namespaces with touched Services. */
  touchedNamespaces(): string[] {
    return [...this.touched.keys()];
  }

  /**
   * Compares what the touched Services of `namespace` hold now with what was handed out for them: kept
   * holdings become `held`, the rest are freed. Called once no request on services in the namespace is in
   * flight, so every request that handed something out for them has finished.
   */
  async settle(namespace: string): Promise<void> {
    const keys = this.touched.get(namespace);
    if (!keys) return;
    this.touched.delete(namespace);
    for (const key of keys) {
      try {
        await this.settleService(key);
      } catch (err) {
        this.touch(key);
        this.options.logger.warn({ err, service: key }, 'could not settle the allocations of a service; the repair loop will');
      }
    }
  }

  /**
   * A write of a Service succeeded and answered `service` as stored: what it holds is confirmed at once.
   * When every holding of the Service is confirmed by its latest write, settling it needs no read.
   */
  written(service: Service): void {
    const key = serviceKey(service.metadata.namespace ?? '', service.metadata.name ?? '');
    const revision = Number(service.metadata.resourceVersion ?? 0);
    const previous = this.lastWritten.get(key);
    if (previous && previous.revision > revision) return;
    const values = new Set([...heldIPs(service).map((ip) => `ip ${ip}`), ...heldPorts(service).map((port) => `port ${port}`)]);
    this.lastWritten.set(key, { revision, values });
    for (const allocator of this.clusterIPs.values())
      for (const holding of allocator.holdings.ofKey(key)) if (values.has(`ip ${holding.value}`)) allocator.holdings.confirm(holding);
    for (const holding of this.nodePorts.holdings.ofKey(key)) if (values.has(`port ${holding.value}`)) this.nodePorts.holdings.confirm(holding);
  }

  private async settleService(key: string): Promise<void> {
    const ipHoldings = [...this.clusterIPs.values()].flatMap((allocator) => allocator.holdings.ofKey(key).map((holding) => ({ allocator, holding })));
    const portHoldings = this.nodePorts.holdings.ofKey(key);
    if (ipHoldings.length === 0 && portHoldings.length === 0) return;
    const written = this.lastWritten.get(key)?.values;
    const holdingValues = [...ipHoldings.map(({ holding }) => `ip ${holding.value}`), ...portHoldings.map((holding) => `port ${holding.value}`)];
    const allConfirmed = ipHoldings.every(({ holding }) => holding.state === 'held') && portHoldings.every((holding) => holding.state === 'held');
    if (written && allConfirmed && written.size === holdingValues.length && holdingValues.every((value) => written.has(value))) return;
    const service = await this.options.lookup(key);
    const ips = new Set(heldIPs(service));
    const ports = new Set(heldPorts(service));
    for (const { allocator, holding } of ipHoldings) {
      if (ips.has(holding.value)) allocator.holdings.confirm(holding);
      else await allocator.release(holding);
    }
    for (const holding of portHoldings) {
      if (ports.has(holding.value)) this.nodePorts.holdings.confirm(holding);
      else this.nodePorts.release(holding);
    }
  }
}

function invalid(name: string, causes: StatusCause[]) {
  return errors.invalid('Service', '', name, causes);
}
