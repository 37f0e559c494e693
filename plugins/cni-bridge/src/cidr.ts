import { cidrOptionReaders } from '@skiff/api';
import { CniError } from './errors.js';

export { formatCidr, intToIp, ipToInt, isHostAddress, type Ipv4Cidr } from '@skiff/api';

/** The bridge's CIDR options (`parseCidr(text, what)`, `nodeSubnet(clusterCIDR, index, maskSize)`), refused as CniErrors. */
export const { parseCidr, nodeSubnet } = cidrOptionReaders({
  invalid: (problem) => new CniError('SKIFF_ERR_CNI_CIDR_INVALID', problem),
  outOfRange: (problem) => new CniError('SKIFF_ERR_CNI_NODE_OUT_OF_RANGE', problem),
});
