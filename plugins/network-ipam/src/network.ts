import { join } from 'node:path';
import type { Logger, NetworkAttachment, NetworkResult, PodNetwork } from '@skiff/kernel';
import { AllocationStore, type Allocation } from './allocation-store.js';
import { formatCidr, intToIp, ipToInt, type Ipv4Cidr } from './cidr.js';
import { IpamError } from './errors.js';
import { CNI_VERSION, NETWORK_NAME } from './names.js';

/** A MAC derived from the address (0a:58 + the IPv4 octets), stable for an IP like OVN's. */
function macFor(ip: number): string {
  return ['0a', '58', ...[ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255].map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

/**
 * Host-local style IPAM over one node subnet: the gateway is the first address, pods get the ones after
 * it, round-robin from the last handed out; allocations live in files so they survive restarts.
 * Operations run one at a time, so a scan and the claim that follows it cannot interleave in-process
 * (and O_EXCL keeps even two processes from sharing an address).
 */
export class IpamNetwork implements PodNetwork {
  readonly name = NETWORK_NAME;
  private readonly store: AllocationStore;
  private readonly gateway: number;
  private readonly first: number;
  private readonly last: number;
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly subnet: Ipv4Cidr,
    dir: string,
    private readonly logger?: Logger,
  ) {
    const size = 2 ** (32 - subnet.prefix);
    this.store = new AllocationStore(dir);
    this.gateway = subnet.network + 1;
    this.first = subnet.network + 2;
    this.last = subnet.network + size - 2;
  }

  /** A network over `subnet` keeping its allocations under `<dataDir>/ipam/`. */
  static async open(subnet: Ipv4Cidr, dataDir: string, logger?: Logger): Promise<IpamNetwork> {
    const network = new IpamNetwork(subnet, join(dataDir, 'ipam'), logger);
    await network.store.init();
    return network;
  }

  podCIDR(): string {
    return formatCidr(this.subnet);
  }

  add(attachment: NetworkAttachment): Promise<NetworkResult> {
    return this.serially(async () => this.result(await this.allocate(attachment), attachment));
  }

  del(attachment: NetworkAttachment): Promise<void> {
    return this.serially(async () => {
      for (const allocation of await this.store.list()) {
        if (allocation.containerId === attachment.containerId && allocation.ifName === attachment.ifName) {
          await this.store.release(allocation.ip);
          this.logger?.debug({ ip: allocation.ip, container: attachment.containerId }, 'address released');
        }
      }
    });
  }

  /** CNI CHECK: the container still holds an address. */
  check(attachment: NetworkAttachment): Promise<void> {
    return this.serially(async () => {
      const held = (await this.store.list()).some((a) => a.containerId === attachment.containerId && a.ifName === attachment.ifName);
      if (!held) throw new Error(`container ${attachment.containerId} holds no address on ${this.podCIDR()}`);
    });
  }

  private async allocate(attachment: NetworkAttachment): Promise<number> {
    const allocations = await this.store.list();
    const own = allocations.find((a) => a.containerId === attachment.containerId && a.ifName === attachment.ifName);
    if (own) return ipToInt(own.ip)!;

    const record = (ip: number): Allocation => ({
      ip: intToIp(ip),
      containerId: attachment.containerId,
      ifName: attachment.ifName,
      podUid: attachment.podUid,
      pod: `${attachment.podNamespace}/${attachment.podName}`,
    });

    const preferred = attachment.preferredIP === undefined ? undefined : ipToInt(attachment.preferredIP);
    if (preferred !== undefined && preferred >= this.first && preferred <= this.last) {
      const holder = allocations.find((a) => a.ip === attachment.preferredIP);
      if (!holder && (await this.store.reserve(record(preferred)))) return this.claimed(preferred);
      // The same pod's earlier sandbox (gone with a restart) held it: the pod keeps its address.
      if (holder && holder.podUid === attachment.podUid && holder.ifName === attachment.ifName) {
        await this.store.replace(record(preferred));
        return this.claimed(preferred);
      }
    }

    const taken = new Set(allocations.map((a) => a.ip));
    const lastText = await this.store.lastReserved();
    const last = lastText === undefined ? undefined : ipToInt(lastText);
    const start = last !== undefined && last >= this.first && last < this.last ? last + 1 : this.first;
    const count = this.last - this.first + 1;
    for (let step = 0; step < count; step++) {
      const ip = this.first + ((start - this.first + step) % count);
      if (taken.has(intToIp(ip))) continue;
      if (await this.store.reserve(record(ip))) return this.claimed(ip);
    }
    throw new IpamError('SKIFF_ERR_IPAM_EXHAUSTED', { first: intToIp(this.first), last: intToIp(this.last) });
  }

  private async claimed(ip: number): Promise<number> {
    await this.store.setLastReserved(intToIp(ip));
    return ip;
  }

  private result(ip: number, attachment: NetworkAttachment): NetworkResult {
    return {
      cniVersion: CNI_VERSION,
      interfaces: [{ name: attachment.ifName, mac: macFor(ip), sandbox: attachment.netnsPath }],
      ips: [{ address: `${intToIp(ip)}/${this.subnet.prefix}`, gateway: intToIp(this.gateway) }],
      dns: {},
    };
  }

  private serially<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.tail.then(operation, operation);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
