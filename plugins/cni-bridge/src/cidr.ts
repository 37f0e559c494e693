import { nodeSubnet as subnetOfNode, parseIpv4Cidr, type Ipv4Cidr } from '@skiff/api';
import { CniError } from './errors.js';

export { formatCidr, intToIp, ipToInt, isHostAddress, type Ipv4Cidr } from '@skiff/api';

/** Parses an option's CIDR; a bad one is this plugin's coded error naming the option. */
export function parseCidr(text: string, what = 'CIDR'): Ipv4Cidr {
  const parsed = parseIpv4Cidr(text);
  if ('problem' in parsed) throw new CniError('SKIFF_ERR_CNI_CIDR_INVALID', { what, value: text, detail: parsed.problem });
  return parsed.cidr;
}

/** The subnet of node `index` (0-based): the (index + 1)-th /maskSize block of the cluster CIDR. */
export function nodeSubnet(clusterCIDR: string, index: number, maskSize: number): Ipv4Cidr {
  const cluster = parseCidr(clusterCIDR, 'clusterCIDR');
  const found = subnetOfNode(cluster, index, maskSize);
  if ('subnet' in found) return found.subnet;
  if (found.problem === 'mask')
    throw new CniError('SKIFF_ERR_CNI_CIDR_INVALID', { what: 'nodeCIDRMaskSize', value: String(maskSize), detail: `must be between ${cluster.prefix} and 30` });
  throw new CniError('SKIFF_ERR_CNI_NODE_OUT_OF_RANGE', { index: String(index), clusterCIDR, count: String(found.blocks), maskSize: String(maskSize) });
}
