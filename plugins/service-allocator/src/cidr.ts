import { isIP } from 'node:net';

export type IPFamily = 'IPv4' | 'IPv6';

/** Whether a Service's `ipFamilies` entry (or familyOf's answer) is a family this allocator knows. */
export const isIPFamily = (value: string | undefined): value is IPFamily => value === 'IPv4' || value === 'IPv6';

const BITS: Record<IPFamily, number> = { IPv4: 32, IPv6: 128 };

/** The family of an address, or undefined when it is not one. */
export function familyOf(address: string): IPFamily | undefined {
  const version = isIP(address);
  return version === 4 ? 'IPv4' : version === 6 ? 'IPv6' : undefined;
}

/** An address as a number (IPv4 in 32 bits, IPv6 in 128). */
export function ipToBigInt(address: string): bigint {
  if (familyOf(address) === 'IPv4') return address.split('.').reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string): string[] => (part ? part.split(':') : []);
  let words = groups(head);
  if (tail !== undefined) {
    const back = groups(tail);
    words = [...words, ...Array<string>(8 - words.length - back.length).fill('0'), ...back];
  }
  // An embedded IPv4 tail (::ffff:1.2.3.4) is two words.
  const last = words.at(-1) ?? '';
  if (last.includes('.')) {
    const v4 = ipToBigInt(last);
    words = [...words.slice(0, -1), (v4 >> 16n).toString(16), (v4 & 0xffffn).toString(16)];
  }
  return words.reduce((value, word) => (value << 16n) | BigInt(parseInt(word, 16)), 0n);
}

/** The canonical text of an address (dotted IPv4; shortest IPv6, as Go and the IPAddress names print it). */
export function bigIntToIP(value: bigint, family: IPFamily): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  const words = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  // RFC 5952: the longest run (two or more) of zero words becomes "::", the first one on a tie.
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  const hex = words.map((word) => word.toString(16));
  if (best.start < 0) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`;
}

/** The canonical form of an address, or undefined when it is not one. */
export function canonicalIP(address: string): string | undefined {
  const family = familyOf(address);
  return family && bigIntToIP(ipToBigInt(address), family);
}

/**
 * One service CIDR and the addresses it hands out, as upstream's IPAddress-backed allocator reads a
 * ServiceCIDR: the network address is never given, nor (IPv4) the broadcast address; the first usable
 * address is the `kubernetes` Service's. KEP-3070 splits the range: the lowest `reserved` addresses
 * (min(max(16, size/16), 256), none for ranges of 16 or fewer) are left to requested IPs, and automatic
 * allocation takes from above them first.
 */
export class ServiceCIDR {
  readonly family: IPFamily;
  readonly prefixLength: number;
  readonly network: bigint;
  /** The first address handed out, as a number. */
  readonly first: bigint;
  /** The last address handed out, as a number. */
  readonly last: bigint;
  /** How many addresses can be handed out. */
  readonly size: bigint;
  /** How many of the lowest addresses automatic allocation leaves for requested ones, unless the rest is full. */
  readonly reserved: bigint;

  constructor(readonly cidr: string) {
    const slash = cidr.indexOf('/');
    const address = slash < 0 ? '' : cidr.slice(0, slash);
    const family = familyOf(address);
    const bits = family && BITS[family];
    const prefixLength = Number(cidr.slice(slash + 1));
    if (!family || !bits || !/^\d{1,3}$/.test(cidr.slice(slash + 1)) || prefixLength > bits) throw new RangeError(`invalid CIDR address: ${cidr}`);
    const hostBits = BigInt(bits - prefixLength);
    const network = (ipToBigInt(address) >> hostBits) << hostBits;
    if (network !== ipToBigInt(address))
      throw new RangeError(`${cidr} is not a network address (did you mean ${bigIntToIP(network, family)}/${prefixLength}?)`);
    this.family = family;
    this.prefixLength = prefixLength;
    this.network = network;
    const total = 1n << hostBits;
    this.first = network + 1n;
    this.last = network + total - (family === 'IPv4' ? 2n : 1n);
    this.size = this.last >= this.first ? this.last - this.first + 1n : 0n;
    this.reserved = total <= 16n ? 0n : bigMin(bigMax(16n, total / 16n), 256n);
  }

  /** The canonical text of the range. */
  toString(): string {
    return `${bigIntToIP(this.network, this.family)}/${this.prefixLength}`;
  }

  /** The address at `offset` from the first one handed out. */
  at(offset: bigint): string {
    return bigIntToIP(this.first + offset, this.family);
  }

  /** Whether `address` lies in the prefix at all (the network and broadcast addresses included). */
  containsPrefix(address: string): boolean {
    if (familyOf(address) !== this.family) return false;
    return ipToBigInt(address) >> BigInt(BITS[this.family] - this.prefixLength) === this.network >> BigInt(BITS[this.family] - this.prefixLength);
  }

  /** Whether `address` is one this range hands out. */
  contains(address: string): boolean {
    if (familyOf(address) !== this.family) return false;
    const value = ipToBigInt(address);
    return value >= this.first && value <= this.last;
  }

  /**
   * Every address in the order automatic allocation tries them: the upper part from a random point,
   * wrapping around, then the reserved lower part from a random point.
   */
  *candidates(random: (below: bigint) => bigint = randomBelow): Generator<string> {
    const upper = this.size - this.reserved;
    yield* this.walk(this.reserved, upper, random);
    yield* this.walk(0n, bigMin(this.reserved, this.size), random);
  }

  private *walk(start: bigint, length: bigint, random: (below: bigint) => bigint): Generator<string> {
    if (length <= 0n) return;
    const from = random(length);
    for (let i = 0n; i < length; i++) yield this.at(start + ((from + i) % length));
  }
}

export function randomBelow(limit: bigint): bigint {
  if (limit <= BigInt(Number.MAX_SAFE_INTEGER)) return BigInt(Math.floor(Math.random() * Number(limit)));
  let value = 0n;
  for (let bits = 0n; 1n << bits < limit; bits += 32n) value = (value << 32n) | BigInt(Math.floor(Math.random() * 2 ** 32));
  return value % limit;
}

function bigMin(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function bigMax(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
