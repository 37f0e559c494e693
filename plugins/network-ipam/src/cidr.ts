import { IpamError } from './errors.js';

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
  const [address, prefixText, extra] = text.split('/');
  const base = address === undefined ? undefined : ipToInt(address);
  const prefix = Number(prefixText);
  if (base === undefined || extra !== undefined || !/^\d{1,2}$/.test(prefixText ?? '') || prefix > 32)
    throw new IpamError('SKIFF_ERR_IPAM_CIDR_INVALID', { what, value: text, detail: 'expected an IPv4 CIDR such as 10.244.0.0/16' });
  const size = 2 ** (32 - prefix);
  if (base % size !== 0)
    throw new IpamError('SKIFF_ERR_IPAM_CIDR_INVALID', {
      what,
      value: text,
      detail: `the host bits are set (did you mean ${intToIp(base - (base % size))}/${prefix}?)`,
    });
  return { network: base, prefix };
}

/**
 * The subnet of node `index` (0-based): the (index + 1)-th /maskSize block of the cluster CIDR, so with
 * 10.244.0.0/16 and /24 node 0 gets 10.244.1.0/24 (the first block stays free, as in kube-proxy setups).
 */
export function nodeSubnet(clusterCIDR: string, index: number, maskSize: number): Ipv4Cidr {
  const cluster = parseCidr(clusterCIDR, 'clusterCIDR');
  if (maskSize < cluster.prefix || maskSize > 30)
    throw new IpamError('SKIFF_ERR_IPAM_CIDR_INVALID', {
      what: 'nodeCIDRMaskSize',
      value: String(maskSize),
      detail: `must be between ${cluster.prefix} and 30`,
    });
  const count = 2 ** (maskSize - cluster.prefix);
  const block = index + 1;
  if (block >= count)
    throw new IpamError('SKIFF_ERR_IPAM_NODE_OUT_OF_RANGE', { index: String(index), clusterCIDR, count: String(count - 1), maskSize: String(maskSize) });
  return { network: cluster.network + block * 2 ** (32 - maskSize), prefix: maskSize };
}
