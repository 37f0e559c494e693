import type { ContainerPort, Pod } from '@skiff/api';
import { BIND_ALL_HOST_IP } from './names.js';

/** A host port as the node binds it: the address (0.0.0.0 when unset), the protocol (TCP when unset), the port. */
export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

function hostPort(port: ContainerPort): HostPort {
  return { ip: port.hostIP || BIND_ALL_HOST_IP, protocol: port.protocol || 'TCP', port: port.hostPort! };
}

/** The host ports a pod's containers ask for (init containers bind none; a hostPort of 0 or less asks for none). */
export function podHostPorts(pod: Pod): HostPort[] {
  const ports: HostPort[] = [];
  for (const container of pod.spec.containers) {
    for (const port of container.ports ?? []) if ((port.hostPort ?? 0) > 0) ports.push(hostPort(port));
  }
  return ports;
}

/** The host ports in use on a node, by address, each as `<protocol>/<port>`. */
export class UsedHostPorts {
  private readonly byIp = new Map<string, Set<string>>();

  add({ ip, protocol, port }: HostPort): void {
    let used = this.byIp.get(ip);
    if (!used) this.byIp.set(ip, (used = new Set()));
    used.add(`${protocol}/${port}`);
  }

  /**
   * Whether binding `wanted` clashes: a wildcard address clashes with the same protocol and port on any
   * address; a specific one with the same protocol and port on itself or on the wildcard.
   */
  conflicts({ ip, protocol, port }: HostPort): boolean {
    const key = `${protocol}/${port}`;
    if (ip === BIND_ALL_HOST_IP) {
      for (const used of this.byIp.values()) if (used.has(key)) return true;
      return false;
    }
    return !!this.byIp.get(BIND_ALL_HOST_IP)?.has(key) || !!this.byIp.get(ip)?.has(key);
  }

  static of(pods: readonly Pod[]): UsedHostPorts {
    const used = new UsedHostPorts();
    for (const pod of pods) for (const port of podHostPorts(pod)) used.add(port);
    return used;
  }
}
