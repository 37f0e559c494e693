import { Holdings, type Holding } from './holdings.js';

/** A node port range, `30000-32767` (both ends included), or a single port. */
export class PortRange {
  constructor(
    readonly base: number,
    readonly size: number,
  ) {}

  static parse(text: string): PortRange {
    const match = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5}))?\s*$/.exec(text);
    const low = Number(match?.[1]);
    const high = match?.[2] === undefined ? low : Number(match[2]);
    if (!match || low < 1 || high > 65535 || high < low) throw new RangeError(`invalid port range "${text}": want <low>-<high> within 1-65535`);
    return new PortRange(low, high - low + 1);
  }

  contains(port: number): boolean {
    return Number.isInteger(port) && port >= this.base && port < this.base + this.size;
  }

  toString(): string {
    return `${this.base}-${this.base + this.size - 1}`;
  }
}

/** Why a node port could not be had, worded as upstream's port allocator. */
export class NodePortError extends Error {
  constructor(
    message: string,
    readonly kind: 'allocated' | 'range' | 'full',
  ) {
    super(message);
    this.name = 'NodePortError';
  }
}

/**
 * The node ports in use, kept in this process (the API server is one process here). A port is taken by
 * recording it: the caller is the only writer, so no two requests can record the same port. What the
 * stored Services hold is the truth; `load` and the repair loop rebuild this from them.
 */
export class NodePortAllocator {
  readonly holdings = new Holdings<number>();

  constructor(
    readonly range: PortRange,
    private readonly random: (below: number) => number = (below) => Math.floor(Math.random() * below),
  ) {}

  /** Takes a requested port for `key`. A port the same service holds already is its own. */
  allocate(port: number, key: string, state: Holding<number>['state'] = 'pending'): Holding<number> {
    this.check(port, key);
    // A fresh record even for the service's own port: a settle that examined the old one leaves it alone.
    return this.holdings.set(port, key, state);
  }

  /** Throws what `allocate` would, without taking the port (dry runs). */
  check(port: number, key: string): void {
    if (!this.range.contains(port))
      throw new NodePortError(`provided port is not in the valid range. The range of valid ports is ${this.range.toString()}`, 'range');
    const current = this.holdings.get(port);
    if (current && current.key !== key) throw new NodePortError('provided port is already allocated', 'allocated');
  }

  /** The first free port, taken by nobody (dry runs). */
  peekNext(): number {
    const { base, size } = this.range;
    for (let port = base; port < base + size; port++) if (!this.holdings.has(port)) return port;
    throw new NodePortError('range is full', 'full');
  }

  /**
   * Takes any free port for `key`: from a random point of the upper part of the range first, then of the
   * lower part, which is left for requested ports (KEP-3668: min(max(16, size/32), 128) ports, none for
   * ranges of 16 or fewer).
   */
  allocateNext(key: string): Holding<number> {
    const { base, size } = this.range;
    const reserved = this.reserved;
    for (const [start, length] of [
      [base + reserved, size - reserved],
      [base, reserved],
    ] as const) {
      const from = length > 0 ? this.random(length) : 0;
      for (let i = 0; i < length; i++) {
        const port = start + ((from + i) % length);
        if (!this.holdings.has(port)) return this.holdings.set(port, key, 'pending');
      }
    }
    throw new NodePortError('range is full', 'full');
  }

  /** How many of the lowest ports automatic allocation leaves for requested ones, unless the rest is full. */
  get reserved(): number {
    const { size } = this.range;
    return size <= 16 ? 0 : Math.min(Math.max(16, Math.floor(size / 32)), 128);
  }

  release(holding: Holding<number>): boolean {
    return this.holdings.release(holding);
  }

  get used(): number {
    return this.holdings.size;
  }
}
