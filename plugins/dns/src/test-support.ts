import { createSocket } from 'node:dgram';
import { connect, createServer, type Server } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type Packet } from 'dns-packet';

/** A query as dns-packet encodes it: one question, RD set, EDNS0 when `udpSize` is given. */
export function queryPacket(name: string, type: string, options: { id?: number; udpSize?: number; klass?: string } = {}): Buffer {
  const packet: Packet = {
    type: 'query',
    id: options.id ?? 4242,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type: type as 'A', class: (options.klass ?? 'IN') as 'IN' }],
  };
  if (options.udpSize) packet.additionals = [{ type: 'OPT', name: '.', udpPayloadSize: options.udpSize } as Answer];
  return dnsPacket.encode(packet);
}

/** Sends one datagram to 127.0.0.1:port (from the loopback address `from`); the first answer, or undefined after `timeoutMs`. */
export function udpExchange(port: number, message: Buffer, timeoutMs = 2000, from = '127.0.0.1'): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const finish = (answer: Buffer | undefined) => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    socket.on('message', (answer) => finish(answer));
    socket.bind({ address: from, port: 0 }, () => socket.send(message, port, '127.0.0.1'));
  });
}

/** A record as dns-packet decodes it, loosely typed for assertions. */
export interface DecodedRecord {
  name: string;
  type: string;
  ttl?: number;
  data?: unknown;
}

/** A decoded answer with its rcode (dns-packet's types leave it out). */
export type DecodedAnswer = Omit<DecodedPacket, 'answers' | 'authorities' | 'additionals'> & {
  rcode: string;
  answers: DecodedRecord[];
  authorities: DecodedRecord[];
  additionals: DecodedRecord[];
};

export function decode(message: Buffer): DecodedAnswer {
  return dnsPacket.decode(message) as unknown as DecodedAnswer;
}

export async function udpQuery(
  port: number,
  name: string,
  type: string,
  options: { id?: number; udpSize?: number; klass?: string } = {},
): Promise<DecodedAnswer> {
  const answer = await udpExchange(port, queryPacket(name, type, options));
  if (!answer) throw new Error(`no UDP answer for ${name} ${type}`);
  return decode(answer);
}

/**
 * Writes `bytes` on one TCP connection to 127.0.0.1:port and collects length-prefixed answers until `count`
 * arrived, the server closed, or `timeoutMs` passed. `closed` says whether the server closed the connection.
 */
export function tcpExchange(port: number, bytes: Buffer, count: number, timeoutMs = 2000): Promise<{ answers: Buffer[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const answers: Buffer[] = [];
    let buffered = Buffer.alloc(0);
    let closed = false;
    const timer = setTimeout(() => finish(), timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ answers, closed });
    };
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= buffered.readUInt16BE(0) + 2) {
        answers.push(buffered.subarray(2, buffered.readUInt16BE(0) + 2));
        buffered = buffered.subarray(buffered.readUInt16BE(0) + 2);
      }
      if (answers.length >= count) finish();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('error', () => undefined);
  });
}

/** A message behind its two-byte length (RFC 1035 4.2.2). */
export function framed(message: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(message.length);
  return Buffer.concat([length, message]);
}

/** How the test upstream treats a name. */
export type UpstreamBehaviour =
  | { answers: Answer[]; rcode?: 'NOERROR' | 'NXDOMAIN'; authorities?: Answer[]; delayMs?: number }
  /** Never answers. */
  | { drop: true }
  /** Over UDP: TC set and no records; over TCP: `answers`. */
  | { truncate: true; answers: Answer[] };

/**
 * A tiny DNS server on 127.0.0.1 (UDP and TCP, one port) that answers from a table, counting what it is
 * asked: the upstream the forwarding tests point the plugin at (never the machine's real resolver).
 */
export class TestUpstream {
  readonly queries: { name: string; type: string; transport: 'udp' | 'tcp' }[] = [];
  private readonly udp = createSocket('udp4');
  private readonly tcp: Server;
  port = 0;

  constructor(private readonly table: Record<string, UpstreamBehaviour>) {
    this.udp.on('message', (message, remote) => {
      const answer = this.answer(message, 'udp');
      if (answer) setTimeout(() => this.udp.send(answer, remote.port, remote.address), this.delayOf(message));
    });
    this.tcp = createServer((socket) => {
      let buffered = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 2 && buffered.length >= buffered.readUInt16BE(0) + 2) {
          const answer = this.answer(buffered.subarray(2, buffered.readUInt16BE(0) + 2), 'tcp');
          buffered = buffered.subarray(buffered.readUInt16BE(0) + 2);
          if (answer) socket.write(framed(answer));
        }
      });
      socket.on('error', () => undefined);
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.udp.bind(0, '127.0.0.1', resolve));
    this.port = this.udp.address().port;
    await new Promise<void>((resolve, reject) => {
      this.tcp.once('error', reject);
      this.tcp.listen(this.port, '127.0.0.1', resolve);
    });
    return this;
  }

  private delayOf(message: Buffer): number {
    const behaviour = this.table[dnsPacket.decode(message).questions![0]!.name.toLowerCase()];
    return behaviour && 'delayMs' in behaviour ? (behaviour.delayMs ?? 0) : 0;
  }

  count(name: string, transport?: 'udp' | 'tcp'): number {
    return this.queries.filter((query) => query.name.toLowerCase() === name && (!transport || query.transport === transport)).length;
  }

  private answer(message: Buffer, transport: 'udp' | 'tcp'): Buffer | undefined {
    const query = dnsPacket.decode(message);
    const question = query.questions![0]!;
    this.queries.push({ name: question.name, type: question.type, transport });
    const behaviour = this.table[question.name.toLowerCase()];
    const base = { type: 'response' as const, id: query.id, questions: query.questions };
    const flags = dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE;
    if (!behaviour) return dnsPacket.encode({ ...base, flags: flags | 3 });
    if ('drop' in behaviour) return undefined;
    if ('truncate' in behaviour) {
      if (transport === 'udp') return dnsPacket.encode({ ...base, flags: flags | dnsPacket.TRUNCATED_RESPONSE });
      return dnsPacket.encode({ ...base, flags, answers: behaviour.answers });
    }
    const answers = behaviour.answers.filter((answer) => answer.type === question.type || answer.type === 'CNAME');
    return dnsPacket.encode({ ...base, flags: flags | (behaviour.rcode === 'NXDOMAIN' ? 3 : 0), answers, authorities: behaviour.authorities ?? [] });
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.udp.close(() => resolve()));
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
  }
}
