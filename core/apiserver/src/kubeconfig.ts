import { isIP } from 'node:net';

/** The URL clients use: a wildcard listen address is reached through loopback; IPv6 goes in brackets. */
export function serverUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `https://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}
