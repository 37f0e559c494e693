import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of an API server that can be frozen: bytes stop flowing both ways while the connections
 * stay open, as when a network drops packets. Clients behind it see requests that never answer: a leader that can no
 * longer renew its lease, a watch that goes silent.
 */
export class FreezableRelay {
  frozen = false;
  url = '';
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(private readonly target: URL) {
    this.server = createServer((inbound) => this.relay(inbound));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The network works again; the connections that lost bytes while frozen are broken, as after a real outage. */
  thaw(): void {
    this.frozen = false;
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(inbound: Socket): void {
    const outbound = connect(Number(this.target.port), this.target.hostname);
    for (const socket of [inbound, outbound]) {
      this.sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => this.sockets.delete(socket));
    }
    inbound.on('data', (chunk) => this.frozen || outbound.write(chunk));
    outbound.on('data', (chunk) => this.frozen || inbound.write(chunk));
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  }
}
