import type { Service } from '@skiff/api';
import type { EventRecorder, Logger } from '@skiff/kernel';
import type { ServiceAllocator } from './allocator.js';
import { familyOf } from './cidr.js';
import type { Holding } from './holdings.js';
import { isManaged, parentServiceKey, type IPAddressClient } from './ip-addresses.js';
import { ALLOCATION_GRACE_MS } from './names.js';
import { heldIPs, heldPorts, serviceKey, splitServiceKey } from './service-spec.js';

export interface RepairSources {
  listServices(): Promise<Service[]>;
  addresses: IPAddressClient;
  recorder?: EventRecorder;
  logger: Logger;
}

/** What one pass of the repair loop changed. */
export interface RepairReport {
  /** IPAddresses created for Services holding an address without one. */
  created: string[];
  /** IPAddresses deleted because no Service holds their address. */
  deleted: string[];
  /** Node ports freed because no Service holds them. */
  freedPorts: number[];
}

/**
 * One pass of the repair loops of kube-apiserver, for cluster IPs and node ports together: every address a
 * stored Service holds has its IPAddress (recreated when missing or naming another parent), every
 * IPAddress of this allocator names a Service holding it (otherwise it is deleted: at start at once, later
 * only when older than the grace period, so a request still creating its Service keeps it), and the node
 * ports in use are exactly those the stored Services hold. `startup` says nothing can be in flight.
 */
export async function repair(allocator: ServiceAllocator, sources: RepairSources, startup: boolean, now = Date.now): Promise<RepairReport> {
  const report: RepairReport = { created: [], deleted: [], freedPorts: [] };
  const startedAt = now();
  const [services, addresses] = await Promise.all([sources.listServices(), sources.addresses.list()]);
  const byKey = new Map(services.map((service) => [serviceKey(service.metadata.namespace ?? '', service.metadata.name ?? ''), service]));
  const youngPending = (holding: Holding<unknown>) => holding.state === 'pending' && startedAt - holding.since < ALLOCATION_GRACE_MS;
  const untouchedSince = (holding: Holding<unknown>) => holding.updated < startedAt;

  // Addresses the stored Services hold.
  const expectedIPs = new Map<string, string>();
  for (const [key, service] of byKey) {
    for (const ip of heldIPs(service)) {
      if (!allocator.clusterIPsOf(familyOf(ip))?.range.contains(ip)) {
        sources.recorder?.event(
          service,
          'Warning',
          'ClusterIPOutOfRange',
          `Cluster IP [${familyOf(ip)}]: ${ip} is not within any configured Service CIDR; please recreate service`,
        );
        continue;
      }
      expectedIPs.set(ip, key);
    }
  }
  const stored = new Map(addresses.map((address) => [address.metadata.name ?? '', address]));
  for (const [ip, key] of expectedIPs) {
    const ips = allocator.clusterIPsOf(familyOf(ip))!;
    const address = stored.get(ip);
    const holding = ips.holdings.get(ip);
    if (address && parentServiceKey(address) === key) {
      if (!holding || holding.key !== key) ips.holdings.set(ip, key, 'held');
      else ips.holdings.confirm(holding);
      continue;
    }
    // Missing, or naming a parent that does not hold it: the Service holding it gets it (again).
    if (address) {
      const parent = parentServiceKey(address);
      if (parent && heldIPs(byKey.get(parent)).includes(ip)) continue;
      await sources.addresses.delete(ip, address.metadata.uid);
    }
    const service = byKey.get(key)!;
    sources.recorder?.event(service, 'Warning', 'ClusterIPNotAllocated', `Cluster IP [${ips.family}]: ${ip} is not allocated; repairing`);
    if (await sources.addresses.create(ip, ips.family, splitServiceKey(key))) report.created.push(ip);
    ips.holdings.set(ip, key, 'held');
  }

  // IPAddresses of this allocator no Service holds.
  for (const address of addresses) {
    const ip = address.metadata.name ?? '';
    const ips = allocator.clusterIPsOf(familyOf(ip));
    if (!ips || !isManaged(address) || expectedIPs.has(ip)) continue;
    const holding = ips.holdings.get(ip);
    if (holding && (youngPending(holding) || !untouchedSince(holding))) continue;
    const created = Date.parse(address.metadata.creationTimestamp ?? '') || 0;
    if (!holding && !startup && startedAt - created < ALLOCATION_GRACE_MS) continue;
    sources.logger.warn({ ip, parent: address.spec?.parentRef }, 'IPAddress appears to have leaked: cleaning up');
    await ips.release(holding ?? ips.holdings.set(ip, parentServiceKey(address) ?? '', 'held', 0), address.metadata.uid);
    report.deleted.push(ip);
  }
  // Holdings whose IPAddress is gone and that no Service holds.
  for (const ips of allocator.clusterIPs.values()) {
    for (const holding of [...ips.holdings.all()]) {
      if (expectedIPs.get(holding.value) === holding.key || stored.has(holding.value) || youngPending(holding) || !untouchedSince(holding)) continue;
      ips.holdings.release(holding);
    }
  }

  // Node ports.
  const expectedPorts = new Map<number, string>();
  for (const [key, service] of byKey) for (const port of heldPorts(service)) if (allocator.nodePorts.range.contains(port)) expectedPorts.set(port, key);
  for (const [port, key] of expectedPorts) {
    const holding = allocator.nodePorts.holdings.get(port);
    if (holding?.key === key) allocator.nodePorts.holdings.confirm(holding);
    else if (!holding || untouchedSince(holding)) allocator.nodePorts.holdings.set(port, key, 'held');
  }
  for (const holding of [...allocator.nodePorts.holdings.all()]) {
    if (expectedPorts.get(holding.value) === holding.key || youngPending(holding) || !untouchedSince(holding)) continue;
    if (allocator.nodePorts.release(holding)) report.freedPorts.push(holding.value);
  }
  return report;
}
