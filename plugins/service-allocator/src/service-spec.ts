import { type Service, type ServiceSpec, type StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { familyOf, isIPFamily, type IPFamily } from './cidr.js';

export const NONE = 'None';

/** `namespace/name`, the key holdings are recorded under. */
export function serviceKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function splitServiceKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function isHeadless(service: Service | undefined): boolean {
  return service?.spec?.clusterIP === NONE || service?.spec?.clusterIPs?.[0] === NONE;
}

/** ExternalName and headless Services have no cluster IP. */
export function needsClusterIP(service: Service | undefined): boolean {
  return !!service && service.spec?.type !== 'ExternalName' && !isHeadless(service);
}

export function needsNodePorts(service: Service | undefined): boolean {
  return service?.spec?.type === 'NodePort' || service?.spec?.type === 'LoadBalancer';
}

/** A LoadBalancer Service with `externalTrafficPolicy: Local` gets a health check node port. */
export function needsHealthCheckNodePort(service: Service | undefined): boolean {
  return service?.spec?.type === 'LoadBalancer' && service.spec.externalTrafficPolicy === 'Local';
}

/** The cluster IPs a stored Service holds. */
export function heldIPs(service: Service | undefined): string[] {
  if (!needsClusterIP(service)) return [];
  const spec = service!.spec ?? {};
  const ips = spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
  return ips.filter((ip) => ip && ip !== NONE);
}

/** The node ports a stored Service holds: its ports' and its health check port. */
export function heldPorts(service: Service | undefined): number[] {
  if (!service) return [];
  const ports = new Set<number>();
  if (needsNodePorts(service)) for (const port of service.spec?.ports ?? []) if (port.nodePort) ports.add(port.nodePort);
  if (needsHealthCheckNodePort(service) && service.spec?.healthCheckNodePort) ports.add(service.spec.healthCheckNodePort);
  return [...ports];
}

const sameList = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  (a ?? []).length === (b ?? []).length && (a ?? []).every((value, i) => value === b?.[i]);

/**
 * Keeps `clusterIP` and `clusterIPs` in step the way upstream's strategy does: a client that sets only the
 * singular field (on create, or by changing it on update) gets the plural one to match.
 */
export function normalizeClusterIPs(spec: ServiceSpec, old: ServiceSpec | undefined): void {
  if (!old) {
    if (spec.clusterIP && !spec.clusterIPs?.length) spec.clusterIPs = [spec.clusterIP];
    return;
  }
  if ((spec.clusterIP ?? '') !== (old.clusterIP ?? '') && sameList(spec.clusterIPs, old.clusterIPs)) {
    if (spec.clusterIP) spec.clusterIPs = [spec.clusterIP];
    else delete spec.clusterIPs;
  }
}

/**
 * What a type change leaves behind, dropped as upstream's strategy does when the client did not change it:
 * cluster IPs and IP families when becoming ExternalName, node ports when becoming ClusterIP (or
 * ExternalName), the health check port when no longer needed.
 */
export function dropTypeDependentFields(service: Service, old: Service): void {
  const spec = (service.spec ??= {});
  const before = old.spec ?? {};
  if (spec.type === 'ExternalName' && before.type !== 'ExternalName') {
    if ((spec.clusterIP ?? '') === (before.clusterIP ?? '') && sameList(spec.clusterIPs, before.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (sameList(spec.ipFamilies, before.ipFamilies)) delete spec.ipFamilies;
    if (spec.ipFamilyPolicy === before.ipFamilyPolicy) delete spec.ipFamilyPolicy;
  }
  if (needsNodePorts(old) && !needsNodePorts(service)) {
    const oldPorts = new Set((before.ports ?? []).map((port) => port.nodePort).filter(Boolean));
    for (const port of spec.ports ?? []) if (port.nodePort !== undefined && oldPorts.has(port.nodePort)) delete port.nodePort;
  }
  if (needsHealthCheckNodePort(old) && !needsHealthCheckNodePort(service) && spec.healthCheckNodePort === before.healthCheckNodePort)
    delete spec.healthCheckNodePort;
  if (spec.type !== 'LoadBalancer' && before.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === before.allocateLoadBalancerNodePorts)
    delete spec.allocateLoadBalancerNodePorts;
}

/**
 * An update that leaves out what was allocated keeps it (a `kubectl replace` of a manifest without
 * clusterIP or nodePort), as upstream's service storage patches allocated values back in.
 */
export function patchAllocatedValues(service: Service, old: Service): void {
  const spec = (service.spec ??= {});
  const before = old.spec ?? {};
  if (needsClusterIP(old) && needsClusterIP(service)) {
    if (!spec.clusterIP) spec.clusterIP = before.clusterIP;
    if (!spec.clusterIPs?.length && before.clusterIPs?.length) spec.clusterIPs = [...before.clusterIPs];
  }
  if (needsNodePorts(old) && needsNodePorts(service)) {
    const usedByBoth = new Set((spec.ports ?? []).map((port) => port.nodePort).filter((port) => port && (before.ports ?? []).some((o) => o.nodePort === port)));
    const byName = new Map((before.ports ?? []).map((port) => [port.name ?? '', port.nodePort]));
    for (const port of spec.ports ?? []) {
      if (port.nodePort) continue;
      const previous = byName.get(port.name ?? '');
      if (previous && !usedByBoth.has(previous)) port.nodePort = previous;
    }
  }
  if (needsHealthCheckNodePort(old) && needsHealthCheckNodePort(service) && !spec.healthCheckNodePort) spec.healthCheckNodePort = before.healthCheckNodePort;
}

/**
 * Defaults and checks `ipFamilies` and `ipFamilyPolicy` against the families this cluster serves
 * (`configured`, primary first), as upstream's allocator does before it allocates; answers the causes of
 * a 422.
 */
export function initIPFamilies(service: Service, old: Service | undefined, configured: readonly IPFamily[]): StatusCause[] {
  const spec = (service.spec ??= {});
  if (spec.type === 'ExternalName') return [];
  if (!spec.ipFamilyPolicy) spec.ipFamilyPolicy = old?.spec?.ipFamilyPolicy ?? 'SingleStack';
  const policy = spec.ipFamilyPolicy;
  const causes: StatusCause[] = [];
  const families = (spec.ipFamilies ??= []);
  if (old && policy === 'SingleStack') {
    if (sameList(spec.clusterIPs, old.spec?.clusterIPs) && (spec.clusterIPs?.length ?? 0) > 1) spec.clusterIPs = spec.clusterIPs!.slice(0, 1);
    if (sameList(families, old.spec?.ipFamilies) && families.length > 1) families.splice(1);
  }
  if (policy === 'SingleStack') {
    if ((spec.clusterIPs?.length ?? 0) === 2)
      causes.push(
        fieldErrors.invalid('spec.ipFamilyPolicy', policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"),
      );
    if (families.length === 2)
      causes.push(
        fieldErrors.invalid('spec.ipFamilyPolicy', policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"),
      );
  }
  (spec.clusterIPs ?? []).forEach((ip, i) => {
    if (ip === NONE || i < families.length) return;
    const family = familyOf(ip);
    if (!family) return;
    if (configured.includes(family)) families.push(family);
    else causes.push(fieldErrors.invalid(`spec.clusterIPs[${i}]`, spec.clusterIPs, `${family} is not configured on this cluster`));
  });
  if (causes.length > 0) return causes;
  if (isHeadless(service) && !Object.keys(spec.selector ?? {}).length) {
    if (families.length === 0) families.push(configured[0]!);
    if (families.length < 2 && policy !== 'SingleStack') families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
    return [];
  }
  if (policy === 'RequireDualStack' && configured.length < 2)
    causes.push(fieldErrors.invalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'));
  families.forEach((family, i) => {
    if (!isIPFamily(family) || !configured.includes(family))
      causes.push(fieldErrors.invalid(`spec.ipFamilies[${i}]`, family, 'not configured on this cluster'));
  });
  if (causes.length > 0) return causes;
  if (families.length === 0) families.push(configured[0]!);
  if (policy !== 'SingleStack' && families.length === 1 && configured.length === 2) families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
  return [];
}

/** Upstream's update rules for cluster IPs: the primary never changes; a secondary only goes with SingleStack. */
export function clusterIPUpdateErrors(service: Service, old: Service): StatusCause[] {
  const spec = service.spec ?? {};
  const before = old.spec ?? {};
  if (spec.type === 'ExternalName' || before.type === 'ExternalName') return [];
  if (isHeadless(service) && isHeadless(old)) return [];
  const now = spec.clusterIPs ?? [];
  const was = before.clusterIPs ?? [];
  const changed = (i: number) => fieldErrors.invalid(`spec.clusterIPs[${i}]`, now, 'may not change once set');
  if (now.length === was.length) return was.flatMap((ip, i) => (ip !== now[i] ? [changed(i)] : []));
  if (now.length < was.length) {
    const causes: StatusCause[] = [];
    if (now.length === 0) causes.push(fieldErrors.invalid('spec.clusterIPs[0]', now, 'primary clusterIP can not be unset'));
    else if (now[0] !== was[0]) causes.push(changed(0));
    if (now.length === 1 && spec.ipFamilyPolicy !== 'SingleStack')
      causes.push(fieldErrors.invalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"));
    return causes;
  }
  return was.length > 0 && now[0] !== was[0] ? [changed(0)] : [];
}
