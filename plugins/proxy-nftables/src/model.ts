import { ipToInt, type EndpointSlice, type Service } from '@skiff/api';
import { DEFAULT_AFFINITY_SECONDS, SERVICE_PROXY_NAME_LABEL } from './names.js';

export type Protocol = 'tcp' | 'udp' | 'sctp';

export interface EndpointInfo {
  ip: string;
  port: number;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  nodeName?: string;
}

/** One port of one Service, with everything the rules need: where it answers and who may answer. */
export interface ServicePortInfo {
  /** `<namespace>/<name>/<protocol>/<port name or number>`: unique per port, and readable in chain names. */
  id: string;
  protocol: Protocol;
  port: number;
  nodePort?: number;
  clusterIP?: string;
  /** spec.externalIPs and the load balancer's ingress IPs: external traffic like NodePorts. */
  externalIPs: string[];
  /** Seconds a client stays with its endpoint (sessionAffinity ClientIP), if it does. */
  affinitySeconds?: number;
  internalLocal: boolean;
  externalLocal: boolean;
  endpoints: EndpointInfo[];
}

const PROTOCOLS: Record<string, Protocol> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

export const isIPv4 = (ip: string | undefined): ip is string => ip !== undefined && ipToInt(ip) !== undefined;

/** The Service's IPv4 ClusterIP (dual-stack Services list it in clusterIPs), if it has one. */
function clusterIPv4(service: Service): string | undefined {
  const ips = service.spec?.clusterIPs?.length ? service.spec.clusterIPs : [service.spec?.clusterIP];
  return ips.find(isIPv4);
}

/** Whether the proxy carries this Service at all: ExternalName, headless and other proxies' Services are not ours. */
export function isProxied(service: Service): boolean {
  if (service.metadata.labels?.[SERVICE_PROXY_NAME_LABEL] !== undefined) return false;
  if (service.spec?.type === 'ExternalName') return false;
  return clusterIPv4(service) !== undefined;
}

/** The endpoints of one Service port from its IPv4 slices: one per address and port, the first slice that names it wins. */
function endpointsFor(slices: readonly EndpointSlice[], portName: string, protocol: string): EndpointInfo[] {
  const found = new Map<string, EndpointInfo>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4') continue;
    const port = slice.ports?.find((p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP') === protocol)?.port;
    if (port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      const ip = endpoint.addresses[0];
      if (!isIPv4(ip) || found.has(`${ip}:${port}`)) continue;
      const ready = endpoint.conditions?.ready ?? true;
      found.set(`${ip}:${port}`, {
        ip,
        port,
        ready,
        serving: endpoint.conditions?.serving ?? ready,
        terminating: endpoint.conditions?.terminating ?? false,
        ...(endpoint.nodeName ? { nodeName: endpoint.nodeName } : {}),
      });
    }
  }
  return [...found.values()].sort((a, b) => (a.ip === b.ip ? a.port - b.port : (ipToInt(a.ip) ?? 0) - (ipToInt(b.ip) ?? 0)));
}

/** The ports of a Service as the proxy sees them (none for Services it does not carry). */
export function servicePorts(service: Service, slices: readonly EndpointSlice[]): ServicePortInfo[] {
  if (!isProxied(service)) return [];
  const spec = service.spec ?? {};
  const clusterIP = clusterIPv4(service);
  const external = [
    ...(spec.externalIPs ?? []),
    // ipMode Proxy: the load balancer itself forwards to the nodes, so its address must not be short-circuited here.
    ...(service.status?.loadBalancer?.ingress ?? []).filter((ingress) => ingress.ipMode !== 'Proxy').map((ingress) => ingress.ip),
  ].filter(isIPv4);
  const affinitySeconds = spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS) : undefined;
  const externallyVisible = spec.type === 'NodePort' || spec.type === 'LoadBalancer' || external.length > 0;
  const ports: ServicePortInfo[] = [];
  for (const port of spec.ports ?? []) {
    const protocol = PROTOCOLS[port.protocol ?? 'TCP'];
    if (!protocol) continue;
    const portName = port.name ?? '';
    ports.push({
      id: `${service.metadata.namespace}/${service.metadata.name}/${protocol}/${portName || port.port}`,
      protocol,
      port: port.port,
      ...(port.nodePort && (spec.type === 'NodePort' || spec.type === 'LoadBalancer') ? { nodePort: port.nodePort } : {}),
      ...(clusterIP ? { clusterIP } : {}),
      externalIPs: [...new Set(external)],
      ...(affinitySeconds !== undefined ? { affinitySeconds } : {}),
      internalLocal: spec.internalTrafficPolicy === 'Local',
      externalLocal: externallyVisible && spec.externalTrafficPolicy === 'Local',
      endpoints: endpointsFor(slices, portName, port.protocol ?? 'TCP'),
    });
  }
  return ports;
}

/**
 * The endpoints traffic may go to: the ready ones, or when none is ready the ones still serving while they
 * terminate (so a rolling update's last old pods keep answering). `local` narrows to this host's nodes first.
 */
export function usableEndpoints(endpoints: readonly EndpointInfo[], local?: ReadonlySet<string>): EndpointInfo[] {
  const candidates = local ? endpoints.filter((e) => e.nodeName !== undefined && local.has(e.nodeName)) : endpoints;
  const ready = candidates.filter((e) => e.ready);
  return ready.length ? ready : candidates.filter((e) => e.serving && e.terminating);
}
