import { CniError } from './errors.js';

export interface Ipv4Cidr {
  /** The network address as an unsigned 32-bit integer. */
  network: number;
  prefix: number;
}

export function ipToInt(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

export function intToIp(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

export function formatCidr(cidr: Ipv4Cidr): string {
  return `${intToIp(cidr.network)}/${cidr.prefix}`;
}

export function parseCidr(text: string, what = 'CIDR'): Ipv4Cidr {
  const [address, prefixText = '', extra] = text.split('/');
  const base = address === undefined ? undefined : ipToInt(address);
  const prefix = Number(prefixText);
  if (base === undefined || extra !== undefined || !/^\d{1,2}$/.test(prefixText) || prefix > 32)
    throw new CniError('SKIFF_ERR_CNI_CIDR_INVALID', { what, value: text, detail: 'expected an IPv4 CIDR such as 10.244.0.0/16' });
  const size = 2 ** (32 - prefix);
  if (base % size !== 0)
    throw new CniError('SKIFF_ERR_CNI_CIDR_INVALID', {
      what,
      value: text,
      detail: `the host bits are set (did you mean ${intToIp(base - (base % size))}/${prefix}?)`,
    });
  return { network: base, prefix };
}

/** Whether `ip` lies in `cidr`, strictly between its network and broadcast addresses. */
export function isHostAddress(ip: string, cidr: Ipv4Cidr): boolean {
  const value = ipToInt(ip);
  const size = 2 ** (32 - cidr.prefix);
  return value !== undefined && value > cidr.network && value < cidr.network + size - 1;
}

/**
 * The subnet of node `index` (0-based): the (index + 1)-th /maskSize block of the cluster CIDR, the
 * convention of @skiff/plugin-network-ipam — with 10.244.0.0/16 and /24, node 0 gets 10.244.1.0/24.
 */
export function nodeSubnet(clusterCIDR: string, index: number, maskSize: number): Ipv4Cidr {
  const cluster = parseCidr(clusterCIDR, 'clusterCIDR');
  if (maskSize < cluster.prefix || maskSize > 30)
    throw new CniError('SKIFF_ERR_CNI_CIDR_INVALID', { what: 'nodeCIDRMaskSize', value: String(maskSize), detail: `must be between ${cluster.prefix} and 30` });
  const count = 2 ** (maskSize - cluster.prefix);
  const block = index + 1;
  if (block >= count) throw new CniError('SKIFF_ERR_CNI_NODE_OUT_OF_RANGE', { index, clusterCIDR, count: count - 1, maskSize });
  return { network: cluster.network + block * 2 ** (32 - maskSize), prefix: maskSize };
}
