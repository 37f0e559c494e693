/**
 * The few parts of the DNS wire format (RFC 1035, EDNS0 of RFC 6891) the hot path reads and patches by hand:
 * the header and question of a query, and the records of an upstream answer. Whole messages are built with
 * dns-packet; reading a query with it would allocate a tree of objects per packet.
 */

export const HEADER_BYTES = 12;
export const QTYPE = Object.freeze({ A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, TXT: 16, AAAA: 28, SRV: 33, OPT: 41, IXFR: 251, AXFR: 252, ANY: 255 });
export const QCLASS_IN = 1;
export const RCODE = Object.freeze({ NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 });
export const OPCODE_QUERY = 0;

export const FLAG_QR = 0x8000;
export const FLAG_AA = 0x0400;
export const FLAG_TC = 0x0200;
export const FLAG_RD = 0x0100;
export const FLAG_RA = 0x0080;

/** The UDP answer size without EDNS0 (RFC 1035 4.2.1), and the most this server sends over UDP with it. */
const CLASSIC_UDP_SIZE = 512;
const MAX_UDP_SIZE = 4096;
const MAX_NAME_BYTES = 255;
const OPT_RECORD_BYTES = 11;
const DOT = 0x2e;

/** One parsed query, reused from packet to packet (the server reads one at a time). */
export interface Query {
  id: number;
  flags: number;
  opcode: number;
  /** The question name lowercased, without the final dot ('' for the root). */
  name: string;
  qtype: number;
  qclass: number;
  /** Where the question ends (after QTYPE and QCLASS): bytes 12..questionEnd are copied into the answer. */
  questionEnd: number;
  /** The EDNS0 UDP payload size the client announced, or 0 without an OPT record. */
  ednsSize: number;
}

export function newQuery(): Query {
  return { id: 0, flags: 0, opcode: 0, name: '', qtype: 0, qclass: 0, questionEnd: 0, ednsSize: 0 };
}

/** Scratch space for the dotted name; one per process is enough, parsing never yields. */
const scratch = Buffer.allocUnsafe(MAX_NAME_BYTES + 1);

/**
 * Reads the header and the single question of a query into `query`. Answers false for anything that is not a
 * well-formed one-question query: a response, a truncated packet, a compressed or overlong question name.
 */
export function parseQuery(buf: Buffer, query: Query): boolean {
  const length = buf.length;
  if (length < HEADER_BYTES + 5) return false;
  const flags = (buf[2]! << 8) | buf[3]!;
  if (flags & FLAG_QR) return false;
  if (buf[4] !== 0 || buf[5] !== 1) return false;
  query.id = (buf[0]! << 8) | buf[1]!;
  query.flags = flags;
  query.opcode = (flags >> 11) & 0xf;
  let offset = HEADER_BYTES;
  let out = 0;
  for (;;) {
    if (offset >= length) return false;
    const labelLength = buf[offset++]!;
    if (labelLength === 0) break;
    // A pointer (0xc0) or a reserved label type in a question: not something a stub resolver sends.
    if (labelLength > 63 || offset + labelLength > length || out + labelLength + 1 > MAX_NAME_BYTES) return false;
    if (out > 0) scratch[out++] = DOT;
    for (let end = offset + labelLength; offset < end; offset++) {
      let byte = buf[offset]!;
      // A dot inside a label cannot be told apart from a label boundary in the dotted form.
      if (byte === DOT) return false;
      if (byte >= 0x41 && byte <= 0x5a) byte |= 0x20;
      scratch[out++] = byte;
    }
  }
  if (offset + 4 > length) return false;
  query.name = out === 0 ? '' : scratch.toString('latin1', 0, out);
  query.qtype = (buf[offset]! << 8) | buf[offset + 1]!;
  query.qclass = (buf[offset + 2]! << 8) | buf[offset + 3]!;
  offset += 4;
  query.questionEnd = offset;
  query.ednsSize = 0;
  const records = ((buf[6]! << 8) | buf[7]!) + ((buf[8]! << 8) | buf[9]!) + ((buf[10]! << 8) | buf[11]!);
  for (let i = 0; i < records; i++) {
    const nameEnd = skipName(buf, offset);
    if (nameEnd < 0 || nameEnd + 10 > length) return false;
    const type = (buf[nameEnd]! << 8) | buf[nameEnd + 1]!;
    if (type === QTYPE.OPT) query.ednsSize = Math.max(CLASSIC_UDP_SIZE, Math.min(MAX_UDP_SIZE, (buf[nameEnd + 2]! << 8) | buf[nameEnd + 3]!));
    offset = nameEnd + 10 + ((buf[nameEnd + 8]! << 8) | buf[nameEnd + 9]!);
    if (offset > length) return false;
  }
  return true;
}

/** The offset after the (possibly compressed) name at `offset`, or -1 when it runs past the message. */
function skipName(buf: Buffer, offset: number): number {
  const length = buf.length;
  for (;;) {
    if (offset >= length) return -1;
    const labelLength = buf[offset]!;
    if (labelLength === 0) return offset + 1;
    if ((labelLength & 0xc0) === 0xc0) return offset + 2 <= length ? offset + 2 : -1;
    if (labelLength > 63) return -1;
    offset += labelLength + 1;
  }
}

/** What the forwarder needs to know of an upstream answer, read without decoding its records. */
export interface AnswerLayout {
  rcode: number;
  truncated: boolean;
  answerCount: number;
  /** Offsets of the TTL of every record but OPT, and their values, to age cached copies. */
  ttlOffsets: number[];
  ttls: number[];
  /** The lowest TTL of the answer section, or undefined when it is empty. */
  minAnswerTtl: number | undefined;
  /** The SOA of the authority section: min(its TTL, its MINIMUM), for negative caching (RFC 2308). */
  negativeTtl: number | undefined;
  /** Where the message ends without its OPT record (the client gets its own). */
  endWithoutOpt: number;
  hasOpt: boolean;
}

/** Walks an upstream answer; undefined when its records run past the message or it is not a response. */
export function readAnswerLayout(buf: Buffer): AnswerLayout | undefined {
  const length = buf.length;
  if (length < HEADER_BYTES) return undefined;
  const flags = buf.readUInt16BE(2);
  if (!(flags & FLAG_QR)) return undefined;
  const questions = buf.readUInt16BE(4);
  const counts = [buf.readUInt16BE(6), buf.readUInt16BE(8), buf.readUInt16BE(10)];
  let offset = HEADER_BYTES;
  for (let i = 0; i < questions; i++) {
    offset = skipName(buf, offset);
    if (offset < 0 || offset + 4 > length) return undefined;
    offset += 4;
  }
  const layout: AnswerLayout = {
    rcode: flags & 0xf,
    truncated: (flags & FLAG_TC) !== 0,
    answerCount: counts[0]!,
    ttlOffsets: [],
    ttls: [],
    minAnswerTtl: undefined,
    negativeTtl: undefined,
    endWithoutOpt: length,
    hasOpt: false,
  };
  for (let section = 0; section < 3; section++) {
    for (let i = 0; i < counts[section]!; i++) {
      const start = offset;
      const nameEnd = skipName(buf, offset);
      if (nameEnd < 0 || nameEnd + 10 > length) return undefined;
      const type = buf.readUInt16BE(nameEnd);
      const ttl = buf.readUInt32BE(nameEnd + 4);
      const rdLength = buf.readUInt16BE(nameEnd + 8);
      offset = nameEnd + 10 + rdLength;
      if (offset > length) return undefined;
      if (type === QTYPE.OPT) {
        // Only the last record can be cut off by moving the end; an OPT elsewhere is left in place.
        if (section === 2 && i === counts[2]! - 1) {
          layout.endWithoutOpt = start;
          layout.hasOpt = true;
        }
        continue;
      }
      layout.ttlOffsets.push(nameEnd + 4);
      layout.ttls.push(ttl);
      if (section === 0) layout.minAnswerTtl = Math.min(layout.minAnswerTtl ?? ttl, ttl);
      if (section === 1 && type === QTYPE.SOA && rdLength >= 20) layout.negativeTtl = Math.min(ttl, buf.readUInt32BE(nameEnd + 10 + rdLength - 4));
    }
  }
  return layout;
}

/** Appends an OPT record announcing `MAX_UDP_SIZE` after `end` and counts it; the buffer must have room. */
export function writeOpt(buf: Buffer, end: number): number {
  buf[end] = 0;
  buf.writeUInt16BE(QTYPE.OPT, end + 1);
  buf.writeUInt16BE(MAX_UDP_SIZE, end + 3);
  buf.writeUInt32BE(0, end + 5);
  buf.writeUInt16BE(0, end + 9);
  buf.writeUInt16BE(buf.readUInt16BE(10) + 1, 10);
  return end + OPT_RECORD_BYTES;
}

/**
 * The answer to `query` from a prepared message (`prepared`: id 0, RD clear, question in lowercase, no OPT):
 * a copy with the query's id, RD bit and question bytes (so a 0x20-mixed-case name comes back as sent), an OPT
 * record when the query had one, and, over UDP, only the header and question with TC set when it is too large.
 */
export function answerFromPrepared(prepared: Buffer, preparedLength: number, query: Query, queryBuf: Buffer, udp: boolean): Buffer {
  const limit = query.ednsSize || CLASSIC_UDP_SIZE;
  const opt = query.ednsSize ? OPT_RECORD_BYTES : 0;
  if (udp && preparedLength + opt > limit) return truncatedAnswer(prepared, query, queryBuf);
  const out = Buffer.allocUnsafe(preparedLength + opt);
  prepared.copy(out, 0, 0, preparedLength);
  stamp(out, query, queryBuf);
  if (opt) writeOpt(out, preparedLength);
  return out;
}

function stamp(out: Buffer, query: Query, queryBuf: Buffer): void {
  out[0] = query.id >> 8;
  out[1] = query.id & 0xff;
  out[2] = out[2]! | ((query.flags & FLAG_RD) >> 8);
  queryBuf.copy(out, HEADER_BYTES, HEADER_BYTES, query.questionEnd);
}

function truncatedAnswer(prepared: Buffer, query: Query, queryBuf: Buffer): Buffer {
  const questionEnd = query.questionEnd;
  const opt = query.ednsSize ? OPT_RECORD_BYTES : 0;
  const out = Buffer.allocUnsafe(questionEnd + opt);
  prepared.copy(out, 0, 0, 4);
  out.writeUInt16BE(1, 4);
  out.fill(0, 6, 12);
  stamp(out, query, queryBuf);
  out[2] = out[2]! | (FLAG_TC >> 8);
  if (opt) writeOpt(out, questionEnd);
  return out;
}

/** A header-and-question answer with `rcode` (FORMERR, REFUSED, NOTIMP, SERVFAIL), built from the query itself. */
export function errorAnswer(query: Query, queryBuf: Buffer, rcode: number, recursionAvailable: boolean): Buffer {
  const questionEnd = query.questionEnd;
  const opt = query.ednsSize ? OPT_RECORD_BYTES : 0;
  const out = Buffer.allocUnsafe(questionEnd + opt);
  queryBuf.copy(out, 0, 0, questionEnd);
  out.writeUInt16BE(FLAG_QR | (query.opcode << 11) | (query.flags & FLAG_RD) | (recursionAvailable ? FLAG_RA : 0) | rcode, 2);
  out.writeUInt16BE(1, 4);
  out.fill(0, 6, 12);
  if (opt) writeOpt(out, questionEnd);
  return out;
}

/** The question section for a lowercased dotted name: the name in labels, then type and class IN. */
export function encodeQuestion(name: string, qtype: number): Buffer {
  const labels = name === '' ? [] : name.split('.');
  const out = Buffer.alloc((name === '' ? 1 : name.length + 2) + 4);
  let offset = 0;
  for (const label of labels) {
    out[offset] = out.write(label, offset + 1, 'latin1');
    offset += label.length + 1;
  }
  out[offset] = 0;
  out.writeUInt16BE(qtype, offset + 1);
  out.writeUInt16BE(QCLASS_IN, offset + 3);
  return out;
}
