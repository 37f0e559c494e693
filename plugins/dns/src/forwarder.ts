import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { randomInt } from 'node:crypto';
import type { Logger } from '@skiff/kernel';
import type { Upstream } from './options.js';
import { TcpFramer } from './tcp-framing.js';
import { FLAG_RD, FLAG_TC, HEADER_BYTES, RCODE, readAnswerLayout, writeOpt, type AnswerLayout } from './wire.js';

export interface ForwarderSettings {
  upstream: readonly Upstream[];
  cacheSize: number;
  maxCacheSeconds: number;
  timeoutMs: number;
  logger: Logger;
}

/** A forwarded answer as kept: the upstream's message without its OPT record, id 0, RD clear. */
export interface ForwardedAnswer {
  wire: Buffer;
  /** Where its TTLs sit and what they were when it arrived. */
  ttlOffsets: number[];
  ttls: number[];
  receivedAt: number;
  expiresAt: number;
}

/** The question of a forwarded query: its wire bytes (name, type, class) and the key it is cached under. */
export interface ForwardQuestion {
  name: string;
  qtype: number;
  wire: Buffer;
}

type Waiter = (answer: ForwardedAnswer | undefined) => void;

interface PendingUdp {
  upstream: Upstream;
  question: Buffer;
  done: (message: Buffer | undefined) => void;
}

/** Distinct questions asked upstream at once, at most. */
const MAX_IN_FLIGHT = 10_000;

/** Upper bound on a TCP answer read from an upstream (a length prefix allows 65535 bytes). */
const MAX_TCP_MESSAGE = 65535;

/**
 * Forwards questions outside the cluster to the upstream resolvers: over UDP, moving to the next server on
 * a timeout or a failure, over TCP when an answer comes back truncated or the client asked over TCP. Answers
 * are cached by name and type (aged on the way out), and clients asking the same question at the same time
 * share one upstream query.
 */
export class Forwarder {
  private readonly cache = new Map<number, Map<string, ForwardedAnswer>>();
  private cached = 0;
  private readonly inFlight = new Map<string, Waiter[]>();
  private readonly pending = new Map<number, PendingUdp>();
  private udp4: UdpSocket | undefined;
  private udp6: UdpSocket | undefined;
  private readonly tcpSockets = new Set<Socket>();
  private closed = false;
  /** Upstream queries sent, by transport: tests and the README's figures read them. */
  readonly stats = { udp: 0, tcp: 0, cacheHits: 0 };

  constructor(private readonly settings: ForwarderSettings) {}

  /** A cached answer still fresh, or undefined. */
  cachedAnswer(name: string, qtype: number, now: number): ForwardedAnswer | undefined {
    const entry = this.cache.get(qtype)?.get(name);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.cache.get(qtype)!.delete(name);
      this.cached--;
      return undefined;
    }
    this.stats.cacheHits++;
    return entry;
  }

  /** Asks the upstreams (or joins the query already asking); undefined when none answered in time. */
  resolve(question: ForwardQuestion, tcp: boolean, waiter: Waiter): void {
    const key = `${tcp ? 't' : 'u'}${question.qtype}/${question.name}`;
    const waiting = this.inFlight.get(key);
    if (waiting) {
      waiting.push(waiter);
      return;
    }
    // A flood of distinct names must not grow without bound: beyond this, the client gets SERVFAIL at once.
    if (this.inFlight.size >= MAX_IN_FLIGHT) {
      waiter(undefined);
      return;
    }
    const waiters = [waiter];
    this.inFlight.set(key, waiters);
    this.exchange(question.wire, tcp)
      .then((message) => (message ? this.remember(question, message) : undefined))
      .catch((err: unknown) => {
        this.settings.logger.debug({ err, name: question.name }, 'forwarding failed');
        return undefined;
      })
      .then((answer) => {
        this.inFlight.delete(key);
        for (const done of waiters) {
          try {
            done(answer);
          } catch (err) {
            this.settings.logger.warn({ err, name: question.name }, 'answering a forwarded query failed');
          }
        }
      });
  }

  private remember(question: ForwardQuestion, message: Buffer): ForwardedAnswer | undefined {
    const layout = readAnswerLayout(message);
    if (!layout) return undefined;
    const wire = Buffer.from(message.subarray(0, layout.endWithoutOpt));
    if (layout.hasOpt) wire.writeUInt16BE(wire.readUInt16BE(10) - 1, 10);
    wire.writeUInt16BE(0, 0);
    wire[2] = wire[2]! & ~(FLAG_RD >> 8);
    const now = Date.now();
    const seconds = this.cacheSeconds(layout);
    const answer: ForwardedAnswer = { wire, ttlOffsets: layout.ttlOffsets, ttls: layout.ttls, receivedAt: now, expiresAt: now + seconds * 1000 };
    if (seconds > 0 && this.settings.cacheSize > 0) this.store(question, answer);
    return answer;
  }

  private cacheSeconds(layout: AnswerLayout): number {
    const cap = this.settings.maxCacheSeconds;
    if (layout.truncated) return 0;
    if (layout.rcode === RCODE.NOERROR && layout.answerCount > 0) return Math.min(cap, layout.minAnswerTtl ?? 0);
    // Negative answers (RFC 2308): as long as the SOA of the authority section says, when there is one.
    if (layout.rcode === RCODE.NXDOMAIN || (layout.rcode === RCODE.NOERROR && layout.answerCount === 0)) return Math.min(cap, layout.negativeTtl ?? 0);
    return 0;
  }

  private store(question: ForwardQuestion, answer: ForwardedAnswer): void {
    let byName = this.cache.get(question.qtype);
    if (!byName) this.cache.set(question.qtype, (byName = new Map()));
    if (!byName.has(question.name)) {
      if (this.cached >= this.settings.cacheSize) this.evictOne();
      this.cached++;
    } else byName.delete(question.name);
    byName.set(question.name, answer);
  }

  /** Drops the oldest entry of the largest type's map (maps keep insertion order). */
  private evictOne(): void {
    let largest: Map<string, ForwardedAnswer> | undefined;
    for (const byName of this.cache.values()) if (!largest || byName.size > largest.size) largest = byName;
    const oldest = largest?.keys().next();
    if (largest && oldest && !oldest.done) {
      largest.delete(oldest.value);
      this.cached--;
    }
  }

  /** The upstream's raw answer to a query for `question`, or undefined when none answered in time. */
  private async exchange(question: Buffer, tcp: boolean): Promise<Buffer | undefined> {
    const servers = this.settings.upstream;
    if (servers.length === 0 || this.closed) return undefined;
    const deadline = Date.now() + this.settings.timeoutMs;
    // At least two tries, so one lost datagram to a lone upstream is not a failure.
    const attempts = Math.max(2, servers.length);
    const perAttempt = Math.max(1, Math.floor(this.settings.timeoutMs / attempts));
    let fallback: Buffer | undefined;
    for (let attempt = 0; attempt < attempts && !this.closed; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      const upstream = servers[attempt % servers.length]!;
      const wait = attempt === attempts - 1 ? left : Math.min(left, perAttempt);
      let message = tcp ? await this.exchangeTcp(upstream, question, wait) : await this.exchangeUdp(upstream, question, wait);
      if (message && !tcp && message.readUInt16BE(2) & FLAG_TC) message = await this.exchangeTcp(upstream, question, Math.max(1, deadline - Date.now()));
      if (!message) continue;
      const rcode = message[3]! & 0xf;
      // A server that fails or refuses: the next one may do better; its answer is kept in case none does.
      if ((rcode === RCODE.SERVFAIL || rcode === RCODE.REFUSED) && servers.length > 1) {
        fallback ??= message;
        continue;
      }
      return message;
    }
    return fallback;
  }

  /** A query for the question with a random id, RD set and an OPT record announcing our UDP size. */
  private queryFor(question: Buffer, id: number): Buffer {
    const query = Buffer.alloc(HEADER_BYTES + question.length + 11);
    query.writeUInt16BE(id, 0);
    query.writeUInt16BE(FLAG_RD, 2);
    query.writeUInt16BE(1, 4);
    question.copy(query, HEADER_BYTES);
    writeOpt(query, HEADER_BYTES + question.length);
    return query;
  }

  private socketFor(family: 4 | 6): UdpSocket {
    const existing = family === 4 ? this.udp4 : this.udp6;
    if (existing) return existing;
    const socket = createSocket({ type: family === 4 ? 'udp4' : 'udp6', recvBufferSize: 1 << 20 });
    socket.on('message', (message, remote) => this.received(message, remote.address, remote.port));
    socket.on('error', (err) => this.settings.logger.warn({ err }, 'upstream UDP socket failed'));
    socket.unref();
    if (family === 4) this.udp4 = socket;
    else this.udp6 = socket;
    return socket;
  }

  private received(message: Buffer, address: string, port: number): void {
    if (message.length < HEADER_BYTES) return;
    const pending = this.pending.get(message.readUInt16BE(0));
    // Only the server asked, with the question asked (RFC 5452's checks against spoofed answers).
    if (!pending || pending.upstream.port !== port || !sameAddress(pending.upstream.address, address)) return;
    if (message.readUInt16BE(4) !== 1 || !sameQuestion(message, pending.question)) return;
    pending.done(message);
  }

  private exchangeUdp(upstream: Upstream, question: Buffer, timeoutMs: number): Promise<Buffer | undefined> {
    return new Promise((resolve) => {
      let id = randomInt(0, 0x10000);
      while (this.pending.has(id)) id = (id + 1) & 0xffff;
      const timer = setTimeout(() => done(undefined), timeoutMs);
      const done = (message: Buffer | undefined) => {
        clearTimeout(timer);
        if (this.pending.get(id) === entry) this.pending.delete(id);
        resolve(message);
      };
      const entry: PendingUdp = { upstream, question, done };
      this.pending.set(id, entry);
      this.stats.udp++;
      this.socketFor(upstream.family).send(this.queryFor(question, id), upstream.port, upstream.address, (err) => {
        if (err) done(undefined);
      });
    });
  }

  private exchangeTcp(upstream: Upstream, question: Buffer, timeoutMs: number): Promise<Buffer | undefined> {
    return new Promise((resolve) => {
      const id = randomInt(0, 0x10000);
      const socket = connect({ host: upstream.address, port: upstream.port });
      this.tcpSockets.add(socket);
      this.stats.tcp++;
      const timer = setTimeout(() => done(undefined), timeoutMs);
      const framer = new TcpFramer(MAX_TCP_MESSAGE);
      const done = (message: Buffer | undefined) => {
        clearTimeout(timer);
        this.tcpSockets.delete(socket);
        socket.destroy();
        resolve(message);
      };
      socket.on('connect', () => {
        const query = this.queryFor(question, id);
        const framed = Buffer.allocUnsafe(query.length + 2);
        framed.writeUInt16BE(query.length, 0);
        query.copy(framed, 2);
        socket.write(framed);
      });
      socket.on('data', (chunk) => {
        if (!framer.push(chunk)) return done(undefined);
        for (let message = framer.next(); message; message = framer.next()) {
          if (message.length >= HEADER_BYTES && message.readUInt16BE(0) === id && sameQuestion(message, question)) return done(message);
        }
      });
      socket.on('error', () => done(undefined));
      socket.on('close', () => done(undefined));
    });
  }

  /** Answers every waiting client with SERVFAIL-by-absence and closes the sockets. */
  close(): void {
    this.closed = true;
    for (const pending of [...this.pending.values()]) pending.done(undefined);
    for (const socket of this.tcpSockets) socket.destroy();
    this.udp4?.close();
    this.udp6?.close();
    this.udp4 = this.udp6 = undefined;
  }
}

function sameAddress(a: string, b: string): boolean {
  return a === b || a.toLowerCase() === b.toLowerCase() || b === `::ffff:${a}`;
}

/** Whether the message's question is `question` (name compared without case). */
function sameQuestion(message: Buffer, question: Buffer): boolean {
  if (message.length < HEADER_BYTES + question.length) return false;
  const nameLength = question.length - 4;
  for (let i = 0; i < question.length; i++) {
    let a = message[HEADER_BYTES + i]!;
    let b = question[i]!;
    if (i < nameLength) {
      if (a >= 0x41 && a <= 0x5a) a |= 0x20;
      if (b >= 0x41 && b <= 0x5a) b |= 0x20;
    }
    if (a !== b) return false;
  }
  return true;
}
