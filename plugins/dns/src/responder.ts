import dnsPacket from 'dns-packet';
import type { ForwardedAnswer, Forwarder } from './forwarder.js';
import {
  answerFromPrepared,
  encodeQuestion,
  errorAnswer,
  FLAG_AA,
  FLAG_QR,
  FLAG_RA,
  HEADER_BYTES,
  newQuery,
  OPCODE_QUERY,
  parseQuery,
  QCLASS_IN,
  QTYPE,
  RCODE,
  type Query,
} from './wire.js';
import type { ZoneAnswer, ZoneIndex } from './zone.js';

/** Where an answer goes: the UDP peer or the TCP connection the query came from. */
export type Reply = (answer: Buffer) => void;

/** A query as kept while its answer is awaited upstream (the parsed Query object is reused per packet). */
interface WaitingQuery extends Query {
  packet: Buffer;
}

/**
 * Turns query packets into answers: cluster names from the zone index, encoded once per (name, type) and
 * copied out with the query's id and question until the index changes; other names through the forwarder.
 */
export class Responder {
  /** Encoded zone answers by type, then name: id 0, RD clear, no OPT. */
  private readonly prepared = new Map<number, Map<string, Buffer>>();
  private preparedCount = 0;
  private readonly query = newQuery();

  constructor(
    private readonly zone: ZoneIndex,
    private readonly forwarder: Forwarder,
    private readonly cacheSize: number,
  ) {
    zone.onChange = () => this.clear();
  }

  private clear(): void {
    if (this.preparedCount === 0) return;
    this.prepared.clear();
    this.preparedCount = 0;
  }

  /**
   * Answers one query packet through `reply` (at once, or later for a forwarded name). Answers false for a
   * packet that is no query this server can read: UDP drops it, TCP closes the connection.
   */
  handle(packet: Buffer, udp: boolean, reply: Reply): boolean {
    const query = this.query;
    if (!parseQuery(packet, query)) return false;
    if (query.opcode !== OPCODE_QUERY) {
      reply(errorAnswer(query, packet, RCODE.NOTIMP, true));
      return true;
    }
    const qtype = query.qtype;
    if (query.qclass !== QCLASS_IN || qtype === QTYPE.AXFR || qtype === QTYPE.IXFR || qtype === QTYPE.OPT) {
      reply(errorAnswer(query, packet, RCODE.REFUSED, true));
      return true;
    }
    const name = query.name;
    const byName = this.prepared.get(qtype);
    const ready = byName?.get(name);
    if (ready) {
      reply(answerFromPrepared(ready, ready.length, query, packet, udp));
      return true;
    }
    const answer = this.zone.lookup(name, qtype);
    if (answer) {
      const encoded = this.encode(name, qtype, answer);
      if (answer.external) this.chase(encoded, answer.external, { ...{}, ...query, packet }, udp, reply);
      else {
        this.remember(qtype, name, encoded, byName);
        reply(answerFromPrepared(encoded, encoded.length, query, packet, udp));
      }
      return true;
    }
    this.forward({ ...{}, ...query, packet }, udp, reply);
    return true;
  }

  private remember(qtype: number, name: string, encoded: Buffer, byName: Map<string, Buffer> | undefined): void {
    if (this.cacheSize === 0) return;
    if (!byName) this.prepared.set(qtype, (byName = new Map()));
    if (this.preparedCount >= this.cacheSize) {
      // Oldest first (insertion order); a full cache is mostly misses nobody repeats.
      const oldest = byName.keys().next();
      if (!oldest.done) byName.delete(oldest.value);
      else this.clear();
      this.preparedCount = Math.max(0, this.preparedCount - 1);
    }
    byName.set(name, encoded);
    this.preparedCount++;
  }

  private encode(name: string, qtype: number, answer: ZoneAnswer): Buffer {
    const encoded = dnsPacket.encode({
      type: 'response',
      id: 0,
      flags: 0,
      // The type is written below: dns-packet wants a name for it, and any number can be asked.
      questions: [{ name, type: 'A', class: 'IN' }],
      answers: answer.answers,
      authorities: answer.authorities,
      additionals: answer.additionals,
    });
    encoded.writeUInt16BE(FLAG_QR | FLAG_AA | FLAG_RA | answer.rcode, 2);
    const questionEnd = HEADER_BYTES + (name === '' ? 1 : name.length + 2);
    encoded.writeUInt16BE(qtype, questionEnd);
    return encoded;
  }

  private forward(query: WaitingQuery, udp: boolean, reply: Reply): void {
    const cached = this.forwarder.cachedAnswer(query.name, query.qtype, Date.now());
    if (cached) {
      reply(this.fromForwarded(cached, query, udp));
      return;
    }
    const question = query.packet.subarray(HEADER_BYTES, query.questionEnd);
    this.forwarder.resolve({ name: query.name, qtype: query.qtype, wire: question }, !udp, (answer) => {
      reply(answer ? this.fromForwarded(answer, query, udp) : errorAnswer(query, query.packet, RCODE.SERVFAIL, true));
    });
  }

  /** A forwarded answer for this client: its id and question, TTLs aged by the time it was kept. */
  private fromForwarded(answer: ForwardedAnswer, query: Query & { packet: Buffer }, udp: boolean): Buffer {
    const out = answerFromPrepared(answer.wire, answer.wire.length, query, query.packet, udp);
    const elapsed = Math.floor((Date.now() - answer.receivedAt) / 1000);
    if (elapsed > 0 && out.length >= answer.wire.length) {
      const { ttlOffsets, ttls } = answer;
      for (let i = 0; i < ttlOffsets.length; i++) out.writeUInt32BE(Math.max(0, ttls[i]! - elapsed), ttlOffsets[i]!);
    }
    return out;
  }

  /**
   * A CNAME of the zone (an ExternalName Service) to a name outside it: the target's records are asked
   * upstream and follow the CNAME, as a stub resolver expects; without them, the CNAME alone.
   */
  private chase(encoded: Buffer, target: { name: string; qtype: number }, query: WaitingQuery, udp: boolean, reply: Reply): void {
    const alone = () => answerFromPrepared(encoded, encoded.length, query, query.packet, udp);
    const targetQuestion = encodeQuestion(target.name, target.qtype);
    const append = (answer: ForwardedAnswer | undefined) => {
      const records = answer ? answerRecords(answer.wire) : undefined;
      if (!records) return reply(alone());
      const joined = Buffer.concat([encoded, records.bytes]);
      // A CNAME answer of this zone has no authority or additional records: the target's answers go last.
      joined.writeUInt16BE(joined.readUInt16BE(6) + records.count, 6);
      joined[3] = (joined[3]! & 0xf0) | records.rcode;
      reply(answerFromPrepared(joined, joined.length, query, query.packet, udp));
    };
    const cached = this.forwarder.cachedAnswer(target.name, target.qtype, Date.now());
    if (cached) append(cached);
    else this.forwarder.resolve({ name: target.name, qtype: target.qtype, wire: targetQuestion }, !udp, append);
  }
}

/**
 * The answer section of a forwarded answer as bytes that stand on their own (no compression pointers),
 * re-encoded through dns-packet; undefined when it has none or cannot be read.
 */
function answerRecords(wire: Buffer): { bytes: Buffer; count: number; rcode: number } | undefined {
  try {
    const decoded = dnsPacket.decode(wire);
    const answers = decoded.answers ?? [];
    if (!answers.length) return undefined;
    const full = dnsPacket.encode({ type: 'response', answers });
    return { bytes: full.subarray(HEADER_BYTES), count: answers.length, rcode: wire[3]! & 0xf };
  } catch {
    return undefined;
  }
}
