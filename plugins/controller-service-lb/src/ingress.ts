import type { LoadBalancerIngress, Node, Service } from '@skiff/api';
import { EXCLUDE_LABEL } from './names.js';

/** Whether this controller answers for the Service: a LoadBalancer no other implementation claims by class. */
export function isOurs(service: Service): boolean {
  return service.spec?.type === 'LoadBalancer' && !service.spec.loadBalancerClass;
}

/**
 * The ingress a LoadBalancer Service gets: the InternalIP of every node not excluded from load balancers
 * and not being deleted, sorted, as k3s's servicelb reports the nodes that carry the traffic.
 */
export function nodeIngress(nodes: readonly Node[]): LoadBalancerIngress[] {
  const ips = new Set<string>();
  for (const node of nodes) {
    if (node.metadata.deletionTimestamp || node.metadata.labels?.[EXCLUDE_LABEL] !== undefined) continue;
    for (const address of node.status?.addresses ?? []) if (address.type === 'InternalIP' && address.address) ips.add(address.address);
  }
  return [...ips].sort(compareIPs).map((ip) => ({ ip, ipMode: 'VIP' }));
}

/** IPv4 before IPv6, then numerically. */
function compareIPs(a: string, b: string): number {
  const v6 = (ip: string) => ip.includes(':');
  if (v6(a) !== v6(b)) return v6(a) ? 1 : -1;
  if (!v6(a)) {
    const parts = (ip: string) => ip.split('.').map(Number);
    const [pa, pb] = [parts(a), parts(b)];
    for (let i = 0; i < 4; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
    return 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sameIngress(a: readonly LoadBalancerIngress[] | undefined, b: readonly LoadBalancerIngress[] | undefined): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}
