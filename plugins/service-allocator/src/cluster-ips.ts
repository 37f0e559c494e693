import type { Service } from '@skiff/api';
import type { ServiceCIDR } from './cidr.js';
import { Holdings, type Holding } from './holdings.js';
import { isManaged, parentServiceKey, type IPAddressClient } from './ip-addresses.js';
import { heldIPs, splitServiceKey } from './service-spec.js';

/** Why a cluster IP could not be had, worded as upstream's allocator. */
export class ClusterIPError extends Error {
  constructor(
    message: string,
    readonly kind: 'allocated' | 'range' | 'full',
  ) {
    super(message);
    this.name = 'ClusterIPError';
  }
}

/** Reads a Service as it is stored now (the request's store read, or a client get outside requests). */
export type ServiceLookup = (key: string) => Promise<Service | undefined>;

/**
 * Cluster IPs of one family, taken by creating the IPAddress named by the address (the create is the lock:
 * a name that exists is taken). `holdings` remembers which Service holds which address, so automatic
 * allocation skips taken addresses without asking, and which ones were handed out by requests not yet
 * settled (`pending`).
 */
export class ClusterIPAllocator {
  readonly holdings = new Holdings<string>();
  /** Holdings being released: requests that want their address wait for the IPAddress to be gone. */
  private readonly releases = new WeakMap<Holding<string>, Promise<void>>();

  constructor(
    readonly range: ServiceCIDR,
    private readonly addresses: IPAddressClient,
  ) {}

  get family() {
    return this.range.family;
  }

  /** Takes a requested address for the Service `key`. */
  async allocate(ip: string, key: string, lookup: ServiceLookup): Promise<Holding<string>> {
    this.checkRange(ip);
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = this.holdings.get(ip);
      const releasing = current && this.releases.get(current);
      if (releasing) {
        await releasing;
        continue;
      }
      if (current && current.key !== key && current.state === 'pending') throw allocated();
      if (await this.addresses.create(ip, this.family, splitServiceKey(key))) return this.holdings.set(ip, key, 'pending');
      const existing = await this.addresses.get(ip);
      if (!existing) continue;
      const parent = parentServiceKey(existing);
      // The address already names this Service (its own, or one a deleted Service of the same name left).
      if (parent === key) return this.holdings.set(ip, key, 'pending');
      const latest = this.holdings.get(ip);
      if (latest && latest.state === 'pending') throw allocated();
      if (!parent || !isManaged(existing)) throw allocated();
      if (heldIPs(await lookup(parent)).includes(ip)) {
        this.holdings.set(ip, parent, 'held');
        throw allocated();
      }
      // Left behind by a Service that no longer holds it and not yet released: take it back.
      await this.addresses.delete(ip, existing.metadata.uid);
    }
    throw allocated();
  }

  /** Takes any free address for the Service `key`. */
  async allocateNext(key: string): Promise<Holding<string>> {
    for (const ip of this.range.candidates()) {
      if (this.holdings.has(ip)) continue;
      // Recorded before the create, so concurrent requests never try the same address.
      const holding = this.holdings.set(ip, key, 'pending');
      try {
        if (await this.addresses.create(ip, this.family, splitServiceKey(key))) return holding;
      } catch (err) {
        this.holdings.release(holding);
        throw err;
      }
      // Taken by something this process did not know of: remember it and move on.
      const existing = await this.addresses.get(ip);
      const parent = existing && parentServiceKey(existing);
      if (parent && this.holdings.get(ip) === holding) this.holdings.set(ip, parent, 'held');
      else if (!parent) this.holdings.release(holding);
    }
    throw new ClusterIPError('range is full', 'full');
  }

  /** An address a dry run would get: the first free one, taken by nobody. */
  peekNext(): string {
    for (const ip of this.range.candidates()) if (!this.holdings.has(ip)) return ip;
    throw new ClusterIPError('range is full', 'full');
  }

  checkRange(ip: string): void {
    if (this.range.contains(ip)) return;
    if (this.range.containsPrefix(ip)) throw new ClusterIPError(`provided IP ${ip} is not in the valid range`, 'range');
    throw new ClusterIPError('the provided network does not match the current range', 'range');
  }

  /**
   * Frees an address: its IPAddress is deleted (only the object that was examined, by uid) and the
   * holding forgotten. Meanwhile requests for the address wait.
   */
  release(holding: Holding<string>, uid?: string): Promise<void> {
    if (this.holdings.get(holding.value) !== holding) return Promise.resolve();
    let releasing = this.releases.get(holding);
    if (!releasing) {
      releasing = (async () => {
        try {
          await this.addresses.delete(holding.value, uid);
        } finally {
          this.holdings.release(holding);
        }
      })();
      this.releases.set(holding, releasing);
    }
    return releasing;
  }
}

function allocated(): ClusterIPError {
  return new ClusterIPError('provided IP is already allocated', 'allocated');
}
