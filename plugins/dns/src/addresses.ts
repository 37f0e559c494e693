import { isIPv4, isIPv6 } from 'node:net';

/** The 8 groups of an IPv6 address as 4-digit lowercase hex, or undefined when it is not one. */
function ipv6Groups(ip: string): string[] | undefined {
  if (!isIPv6(ip)) return undefined;
  let text = ip.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const middle = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => group.padStart(4, '0'));
}

/** The reverse-lookup name of an address (RFC 1035 3.5 in-addr.arpa, RFC 3596 ip6.arpa), or undefined. */
export function reverseName(ip: string): string | undefined {
  if (isIPv4(ip)) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  const groups = ipv6Groups(ip);
  if (!groups) return undefined;
  return `${[...groups.join('')].reverse().join('.')}.ip6.arpa`;
}

/**
 * The address a pod record's first label stands for: `10-244-1-7` is 10.244.1.7 and `fd00--7` is fd00::7
 * (dashes for dots or colons). Undefined when the label is no address.
 */
export function addressFromDashed(label: string): { ip: string; family: 4 | 6 } | undefined {
  const v4 = label.replaceAll('-', '.');
  if (isIPv4(v4)) return { ip: v4, family: 4 };
  const v6 = label.replaceAll('-', ':');
  if (isIPv6(v6) && !v6.includes('%') && !v6.includes('.')) return { ip: v6, family: 6 };
  return undefined;
}

/** An address as a DNS label: dots and colons as dashes (the name of an endpoint without a hostname). */
export function dashedAddress(ip: string): string {
  return ip.toLowerCase().replaceAll(/[.:]/g, '-');
}
