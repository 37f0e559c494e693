import { networkInterfaces } from 'node:os';
import { familyOf } from './cidr.js';

/**
 * The address the `kubernetes` Service's endpoints name: the API server's listen address when it is one
 * address, the first external IPv4 address of this host when it listens on all of them, and 127.0.0.1
 * when it listens on a name (localhost).
 */
export function advertisedAddress(host: string, interfaces = networkInterfaces()): string {
  if (host === '0.0.0.0' || host === '::') {
    for (const entries of Object.values(interfaces)) for (const entry of entries ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
    return '127.0.0.1';
  }
  return familyOf(host) ? host : '127.0.0.1';
}
