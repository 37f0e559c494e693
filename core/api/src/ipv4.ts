// IPv4 addresses and CIDR blocks as unsigned 32-bit integers: what the pod networks hand out per node.

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

/** A CIDR, or what is wrong with the text (for the caller's own error: "expected an IPv4 CIDR …"). */
export function parseIpv4Cidr(text: string): { cidr: Ipv4Cidr } | { problem: string } {
  const [address, prefixText = '', extra] = text.split('/');
  const base = address === undefined ? undefined : ipToInt(address);
  const prefix = Number(prefixText);
  if (base === undefined || extra !== undefined || !/^\d{1,2}$/.test(prefixText) || prefix > 32)
    return { problem: 'expected an IPv4 CIDR such as 10.244.0.0/16' };
  const size = 2 ** (32 - prefix);
  if (base % size !== 0) return { problem: `the host bits are set (did you mean ${intToIp(base - (base % size))}/${prefix}?)` };
  return { cidr: { network: base, prefix } };
}

/** Whether `ip` lies in `cidr`, strictly between its network and broadcast addresses. */
export function isHostAddress(ip: string, cidr: Ipv4Cidr): boolean {
  const value = ipToInt(ip);
  const size = 2 ** (32 - cidr.prefix);
  return value !== undefined && value > cidr.network && value < cidr.network + size - 1;
}

/**
 * The pod subnet of node `index` (0-based): the (index + 1)-th /maskSize block of the cluster's range, so with
 * 10.244.0.0/16 and /24 node 0 gets 10.244.1.0/24 (the first block stays free). Answers what is wrong instead
 * when the mask does not fit the range or the range has too few blocks.
 */
export function nodeSubnet(cluster: Ipv4Cidr, index: number, maskSize: number): { subnet: Ipv4Cidr } | { problem: 'mask' | 'range'; blocks: number } {
  if (maskSize < cluster.prefix || maskSize > 30) return { problem: 'mask', blocks: 0 };
  const count = 2 ** (maskSize - cluster.prefix);
  const block = index + 1;
  if (block >= count) return { problem: 'range', blocks: count - 1 };
  return { subnet: { network: cluster.network + block * 2 ** (32 - maskSize), prefix: maskSize } };
}

/** The parameters of a refused CIDR option: `invalid {what} "{value}": {detail}`. */
export type CidrOptionProblem = { what: string; value: string; detail: string };

/** The parameters of a node past the cluster range: `node {index} has no subnet: {clusterCIDR} holds {count} /{maskSize} node subnets`. */
export type NodeSubnetProblem = { index: string; clusterCIDR: string; count: string; maskSize: string };

/**
 * How a pod network reads its CIDR options, refusing them with its own coded errors: `parseCidr(text, what)`
 * for one CIDR option, `nodeSubnet(clusterCIDR, index, maskSize)` for a node's subnet of the cluster's range
 * (a bad range or mask is `invalid`, a node past the range's blocks `outOfRange`).
 */
export function cidrOptionReaders(refuse: { invalid(problem: CidrOptionProblem): Error; outOfRange(problem: NodeSubnetProblem): Error }): {
  parseCidr(text: string, what?: string): Ipv4Cidr;
  nodeSubnet(clusterCIDR: string, index: number, maskSize: number): Ipv4Cidr;
} {
  const parseCidr = (text: string, what = 'CIDR'): Ipv4Cidr => {
    const parsed = parseIpv4Cidr(text);
    if ('problem' in parsed) throw refuse.invalid({ what, value: text, detail: parsed.problem });
    return parsed.cidr;
  };
  return {
    parseCidr,
    nodeSubnet(clusterCIDR, index, maskSize) {
      const cluster = parseCidr(clusterCIDR, 'clusterCIDR');
      const found = nodeSubnet(cluster, index, maskSize);
      if ('subnet' in found) return found.subnet;
      if (found.problem === 'mask')
        throw refuse.invalid({ what: 'nodeCIDRMaskSize', value: String(maskSize), detail: `must be between ${cluster.prefix} and 30` });
      throw refuse.outOfRange({ index: String(index), clusterCIDR, count: String(found.blocks), maskSize: String(maskSize) });
    },
  };
}
