import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';

/** The interface the IPv4 default route leaves by, from the kernel's routing table (Linux); undefined elsewhere. */
function defaultRouteInterface(routes: string): string | undefined {
  for (const line of routes.split('\n').slice(1)) {
    const [iface, destination, , flags, , , , mask] = line.trim().split(/\s+/);
    // RTF_UP (0x1) and a 0.0.0.0/0 destination: the default route.
    if (iface && destination === '00000000' && mask === '00000000' && (Number.parseInt(flags ?? '0', 16) & 1) === 1) return iface;
  }
  return undefined;
}

function readRoutes(): string {
  try {
    return readFileSync('/proc/net/route', 'utf8');
  } catch {
    return '';
  }
}

/**
 * This machine's address for pods and other machines: the first IPv4 address of the interface the default route
 * leaves by; without a default route, the first non-loopback IPv4 address; without any, 127.0.0.1. The config's
 * `advertiseAddress` (`skiff up --advertise-address`) overrides it.
 */
export function hostAddress(advertiseAddress?: string, interfaces = networkInterfaces(), routes = readRoutes()): string {
  if (advertiseAddress) return advertiseAddress;
  const ipv4 = (name: string) => interfaces[name]?.find((address) => address.family === 'IPv4' && !address.internal)?.address;
  const viaDefault = defaultRouteInterface(routes);
  const preferred = viaDefault ? ipv4(viaDefault) : undefined;
  if (preferred) return preferred;
  for (const name of Object.keys(interfaces)) {
    const address = ipv4(name);
    if (address) return address;
  }
  return '127.0.0.1';
}
