import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIPv6, type BlockList, type Server, type Socket } from 'node:net';
import type { Logger } from '@skiff/kernel';
import { DnsError } from './errors.js';
import type { Responder } from './responder.js';
import { TcpFramer } from './tcp-framing.js';

/** A TCP client quiet for this long is disconnected (RFC 7766 6.2.3 suggests seconds, not minutes). */
const TCP_IDLE_MS = 10_000;
/** Tries at finding a port free for both UDP and TCP when any port will do. */
const PORT_TRIES = 20;
const MAX_TCP_MESSAGE = 65535;
/** Open TCP connections at most; more are closed at once (each holds a file descriptor). */
const MAX_TCP_CONNECTIONS = 1000;

/**
 * Answers go back to the address a query came from, always an IP literal: handing it straight back keeps
 * dgram from a dns.lookup and a deferred tick per datagram.
 */
function literalAddress(address: string, _options: unknown, callback: (err: Error | null, address: string, family: number) => void): void {
  callback(null, address, isIPv6(address) ? 6 : 4);
}

/** The listening sockets: UDP and TCP on one address and one port. */
export class DnsServer {
  private udp: UdpSocket | undefined;
  private tcp: Server | undefined;
  private readonly connections = new Set<Socket>();
  port = 0;

  constructor(
    private readonly responder: Responder,
    private readonly logger: Logger,
    /** Who may ask (the `clients` option): anyone else is ignored. */
    private readonly clients?: BlockList,
  ) {}

  /** Whether `address` may ask; IPv4-mapped IPv6 addresses (a dual-stack socket) count as IPv4. */
  private allowed(address: string | undefined): boolean {
    if (!this.clients || address === undefined) return this.clients === undefined;
    const v4 = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : undefined;
    return v4 ? this.clients.check(v4, 'ipv4') : this.clients.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
  }

  /** Binds UDP, then TCP on the same port; with port 0, tries again when TCP finds the UDP port taken. */
  async listen(address: string, port: number): Promise<void> {
    let lastError: unknown;
    for (let attempt = 0; attempt < (port === 0 ? PORT_TRIES : 1); attempt++) {
      const udp = createSocket({ type: isIPv6(address) ? 'udp6' : 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 4 << 20, lookup: literalAddress });
      try {
        await new Promise<void>((resolve, reject) => {
          udp.once('error', reject);
          udp.bind({ address, port, exclusive: true }, () => {
            udp.off('error', reject);
            resolve();
          });
        });
      } catch (err) {
        udp.close();
        throw new DnsError('SKIFF_ERR_DNS_LISTEN', { address, port, detail: (err as Error).message }, { cause: err });
      }
      const actual = udp.address().port;
      const tcp = createServer({ noDelay: true }, (socket) => this.accept(socket));
      try {
        await new Promise<void>((resolve, reject) => {
          tcp.once('error', reject);
          tcp.listen({ host: address, port: actual, exclusive: true }, () => {
            tcp.off('error', reject);
            resolve();
          });
        });
      } catch (err) {
        lastError = err;
        udp.close();
        continue;
      }
      udp.on('message', (packet, remote) => this.datagram(udp, packet, remote.address, remote.port));
      udp.on('error', (err) => this.logger.warn({ err }, 'DNS UDP socket error'));
      tcp.on('error', (err) => this.logger.warn({ err }, 'DNS TCP server error'));
      this.udp = udp;
      this.tcp = tcp;
      this.port = actual;
      return;
    }
    throw new DnsError('SKIFF_ERR_DNS_LISTEN', { address, port, detail: (lastError as Error | undefined)?.message ?? 'no free port' });
  }

  private datagram(udp: UdpSocket, packet: Buffer, address: string, port: number): void {
    // Ignored rather than refused: an answer to a forged source would reflect traffic at it.
    if (!this.allowed(address)) return;
    try {
      this.responder.handle(packet, true, (answer) => {
        // A forged source port 0 would make send throw, possibly outside this try (a forwarded answer).
        if (this.udp === udp && port !== 0) udp.send(answer, port, address);
      });
    } catch (err) {
      this.logger.warn({ err }, 'DNS query failed');
    }
  }

  private accept(socket: Socket): void {
    if (this.connections.size >= MAX_TCP_CONNECTIONS || !this.allowed(socket.remoteAddress)) {
      socket.destroy();
      return;
    }
    this.connections.add(socket);
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    socket.on('close', () => this.connections.delete(socket));
    socket.on('error', () => socket.destroy());
    const framer = new TcpFramer(MAX_TCP_MESSAGE);
    const reply = (answer: Buffer) => {
      if (socket.destroyed) return;
      const framed = Buffer.allocUnsafe(answer.length + 2);
      framed.writeUInt16BE(answer.length, 0);
      answer.copy(framed, 2);
      socket.write(framed);
    };
    socket.on('data', (chunk) => {
      if (!framer.push(chunk)) return socket.destroy();
      for (let packet = framer.next(); packet; packet = framer.next()) {
        let understood = false;
        try {
          understood = this.responder.handle(packet, false, reply);
        } catch (err) {
          this.logger.warn({ err }, 'DNS query failed');
        }
        if (!understood) return socket.destroy();
      }
    });
  }

  async close(): Promise<void> {
    const udp = this.udp;
    const tcp = this.tcp;
    this.udp = undefined;
    this.tcp = undefined;
    for (const socket of this.connections) socket.destroy();
    await Promise.all([
      udp ? new Promise<void>((resolve) => udp.close(() => resolve())) : undefined,
      tcp ? new Promise<void>((resolve) => tcp.close(() => resolve())) : undefined,
    ]);
  }
}
