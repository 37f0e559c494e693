import { cidrOptionReaders } from '@skiff/api';
import { IpamError } from './errors.js';

export { formatCidr, intToIp, ipToInt, isHostAddress, type Ipv4Cidr } from '@skiff/api';

/** The IPAM's CIDR options (`parseCidr(text, what)`, `nodeSubnet(clusterCIDR, index, maskSize)`), refused as IpamErrors. */
export const { parseCidr, nodeSubnet } = cidrOptionReaders({
  invalid: (problem) => new IpamError('SKIFF_ERR_IPAM_CIDR_INVALID', problem),
  outOfRange: (problem) => new IpamError('SKIFF_ERR_IPAM_NODE_OUT_OF_RANGE', problem),
});
