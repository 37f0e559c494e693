import type { Service } from '@skiff/api';

/** The Services whose variables every pod gets, whatever its namespace or enableServiceLinks: default/kubernetes. */
const MASTER_SERVICES = new Set(['kubernetes']);

/** `my-svc` → `MY_SVC`. */
function variableName(name: string): string {
  return name.replaceAll('-', '_').toUpperCase();
}

function hasClusterIP(service: Service): boolean {
  const ip = service.spec?.clusterIP;
  return !!ip && ip !== 'None' && !!service.spec?.ports?.length;
}

/** `10.0.0.1:80`, `[fd00::1]:80`. */
function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** The variables one Service gives: `<NAME>_SERVICE_HOST`, `_SERVICE_PORT[_<PORT>]`, and Docker's link variables. */
function serviceVariables(service: Service, into: Map<string, string>): void {
  const prefix = variableName(service.metadata.name!);
  const ip = service.spec!.clusterIP!;
  const ports = service.spec!.ports!;
  into.set(`${prefix}_SERVICE_HOST`, ip);
  into.set(`${prefix}_SERVICE_PORT`, String(ports[0]!.port));
  for (const port of ports) if (port.name) into.set(`${prefix}_SERVICE_PORT_${variableName(port.name)}`, String(port.port));
  ports.forEach((port, index) => {
    const protocol = (port.protocol || 'TCP').toLowerCase();
    const url = `${protocol}://${hostPort(ip, port.port)}`;
    if (index === 0) into.set(`${prefix}_PORT`, url);
    const portPrefix = `${prefix}_PORT_${port.port}_${protocol.toUpperCase()}`;
    into.set(portPrefix, url);
    into.set(`${portPrefix}_PROTO`, protocol);
    into.set(`${portPrefix}_PORT`, String(port.port));
    into.set(`${portPrefix}_ADDR`, ip);
  });
}

/**
 * The service environment variables of a pod in `namespace`, as the kubelet makes them: every Service of the
 * namespace with a cluster IP when `enableServiceLinks` is not false, and always the `kubernetes` Service of
 * `default` (KUBERNETES_SERVICE_HOST…). Services are taken in name order.
 */
export function serviceEnvironment(services: readonly Service[], namespace: string, enableServiceLinks: boolean): Map<string, string> {
  const chosen = new Map<string, Service>();
  for (const service of services) {
    if (!hasClusterIP(service)) continue;
    const name = service.metadata.name!;
    if (service.metadata.namespace === 'default' && MASTER_SERVICES.has(name)) {
      if (!chosen.has(name)) chosen.set(name, service);
    } else if (service.metadata.namespace === namespace && enableServiceLinks) chosen.set(name, service);
  }
  const variables = new Map<string, string>();
  for (const name of [...chosen.keys()].sort()) serviceVariables(chosen.get(name)!, variables);
  return variables;
}
