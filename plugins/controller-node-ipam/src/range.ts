import { formatCidr, parseIpv4Cidr, type Ipv4Cidr } from '@skiff/api';
import { NodeIpamError } from './errors.js';

/**
 * The node ranges of a cluster range: block i is the i-th /maskSize block of it. Block 0 is never handed out, as
 * the pod networks' own convention (node index i → block i + 1) leaves it free, so both agree on who has what.
 */
export class NodeRanges {
  readonly blocks: number;
  private readonly size: number;
  private readonly used = new Set<number>();

  constructor(
    private readonly cluster: Ipv4Cidr,
    private readonly maskSize: number,
  ) {
    this.blocks = 2 ** (maskSize - cluster.prefix);
    this.size = 2 ** (32 - maskSize);
  }

  /** Reads the options: `clusterCIDR` an IPv4 CIDR, `nodeCIDRMaskSize` at least its prefix and at most 30. */
  static fromOptions(clusterCIDR: string, nodeCIDRMaskSize: number): NodeRanges {
    const parsed = parseIpv4Cidr(clusterCIDR);
    if ('problem' in parsed) throw new NodeIpamError('SKIFF_ERR_NODE_IPAM_OPTIONS', { option: 'clusterCIDR', detail: `"${clusterCIDR}": ${parsed.problem}` });
    if (nodeCIDRMaskSize < parsed.cidr.prefix || nodeCIDRMaskSize > 30)
      throw new NodeIpamError('SKIFF_ERR_NODE_IPAM_OPTIONS', {
        option: 'nodeCIDRMaskSize',
        detail: `must lie between the prefix of clusterCIDR (${parsed.cidr.prefix}) and 30 (got ${nodeCIDRMaskSize})`,
      });
    return new NodeRanges(parsed.cidr, nodeCIDRMaskSize);
  }

  /** The block a node range is, if it is one of this cluster range's blocks. */
  blockOf(text: string): number | undefined {
    const parsed = parseIpv4Cidr(text);
    if ('problem' in parsed || parsed.cidr.prefix !== this.maskSize) return undefined;
    const offset = parsed.cidr.network - this.cluster.network;
    if (offset < 0 || offset >= this.blocks * this.size) return undefined;
    return offset / this.size;
  }

  /** Marks a node's range taken (a range outside the cluster's is not this allocator's to track). */
  occupy(text: string): void {
    const block = this.blockOf(text);
    if (block !== undefined) this.used.add(block);
  }

  release(text: string): void {
    const block = this.blockOf(text);
    if (block !== undefined) this.used.delete(block);
  }

  /** Takes the lowest free block (from block 1), or answers undefined when every block is taken. */
  allocate(): string | undefined {
    for (let block = 1; block < this.blocks; block++) {
      if (this.used.has(block)) continue;
      this.used.add(block);
      return formatCidr({ network: this.cluster.network + block * this.size, prefix: this.maskSize });
    }
    return undefined;
  }
}
