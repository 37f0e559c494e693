import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from '@skiff/kernel';

export interface ConnectionGuardOptions {
  /** Open client connections at most; past it, the oldest connection that never authenticated is closed. */
  maxConnections: number;
  /** A connection that has not finished its TLS handshake this long after it was accepted is closed. */
  handshakeTimeoutMs: number;
  logger: Logger;
}

interface Connection {
  /** performance.now() when the TCP connection was accepted. */
  readonly acceptedAt: number;
  secure: boolean;
  /** A request on it authenticated as someone (not anonymous): it is never shed. */
  trusted: boolean;
  /** Responses not yet finished on it (more than one when requests are pipelined). */
  readonly responses: Set<ServerResponse>;
}

const SWEEP_INTERVAL_MS = 1_000;
/** Shedding is logged once per interval, with the count, not once per connection of a flood. */
const LOG_INTERVAL_MS = 10_000;

/**
 * Keeps a flood of idle connections from taking the file descriptors that clients with credentials need. Every
 * accepted TCP connection is tracked from the start (before TLS). A connection still in its TLS handshake after
 * `handshakeTimeoutMs` is closed, however slowly its client drips bytes (Node's own handshake timer restarts on
 * each byte). When `maxConnections` are open, each new connection closes the oldest one whose requests never
 * authenticated — handshakes pending, connections that sent nothing, anonymous ones — so the newcomer gets its
 * chance; connections that authenticated (watches, exec streams, kubelets, controllers) are never closed for it.
 * With every slot held by authenticated connections, the newcomer is refused.
 */
export class ConnectionGuard {
  /** Every open connection by its TCP socket. */
  private readonly connections = new Map<Socket, Connection>();
  /** The connections that may be shed, oldest first (a Map iterates in insertion order). */
  private readonly untrusted = new Map<Socket, Connection>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly counts = { shed: 0, handshakeTimeouts: 0, refused: 0 };
  private lastLog = 0;

  constructor(private readonly options: ConnectionGuardOptions) {}

  /** Open connections, handshakes pending included. */
  get size(): number {
    return this.connections.size;
  }

  /** Starts tracking the server's connections; `close` stops the timer. */
  attach(server: TlsServer): void {
    // After TLS's own listener, so the TLS socket exists (and goes) with the TCP one the guard holds.
    server.on('connection', (socket: Socket) => this.accept(socket));
    server.on('secureConnection', (socket: Duplex) => {
      const connection = this.of(socket);
      if (connection) connection.secure = true;
    });
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const connection = this.of(request.socket);
      if (!connection) return;
      connection.responses.add(response);
      response.once('close', () => connection.responses.delete(response));
    });
    this.sweeper = setInterval(() => this.sweep(), Math.min(SWEEP_INTERVAL_MS, this.options.handshakeTimeoutMs / 2));
    this.sweeper.unref();
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  /** A request on this connection authenticated: from now on it is never shed. */
  trust(socket: Duplex): void {
    const tcp = this.tcpSocketOf(socket);
    const connection = tcp && this.connections.get(tcp);
    if (!connection || connection.trusted) return;
    connection.trusted = true;
    this.untrusted.delete(tcp);
  }

  /** Whether a response has started on the connection: anything else written on it would corrupt that one. */
  responding(socket: Duplex): boolean {
    for (const response of this.of(socket)?.responses ?? []) if (response.headersSent) return true;
    return false;
  }

  private accept(socket: Socket): void {
    const connection: Connection = { acceptedAt: performance.now(), secure: false, trusted: false, responses: new Set() };
    this.connections.set(socket, connection);
    this.untrusted.set(socket, connection);
    socket.once('close', () => {
      this.connections.delete(socket);
      this.untrusted.delete(socket);
    });
    if (this.connections.size <= this.options.maxConnections) return;
    for (const candidate of this.untrusted.keys()) {
      if (this.connections.size <= this.options.maxConnections) break;
      if (candidate === socket) this.counts.refused++;
      else this.counts.shed++;
      this.drop(candidate);
    }
    this.report();
  }

  /** Closes the connections whose handshake outlived its deadline; the oldest come first, so the walk stops early. */
  private sweep(): void {
    const deadline = performance.now() - this.options.handshakeTimeoutMs;
    for (const [socket, connection] of this.untrusted) {
      if (connection.acceptedAt > deadline) break;
      if (connection.secure) continue;
      this.counts.handshakeTimeouts++;
      this.drop(socket);
    }
    this.report();
  }

  private drop(socket: Socket): void {
    this.connections.delete(socket);
    this.untrusted.delete(socket);
    socket.destroy();
  }

  private report(): void {
    const { shed, handshakeTimeouts, refused } = this.counts;
    if (shed + handshakeTimeouts + refused === 0) return;
    const now = performance.now();
    if (now - this.lastLog < LOG_INTERVAL_MS) return;
    this.lastLog = now;
    this.options.logger.warn(
      { shed, handshakeTimeouts, refused, connections: this.connections.size, maxConnections: this.options.maxConnections },
      'closed client connections that never authenticated (connection limit or TLS handshake timeout)',
    );
    this.counts.shed = this.counts.handshakeTimeouts = this.counts.refused = 0;
  }

  private of(socket: Duplex): Connection | undefined {
    const tcp = this.tcpSocketOf(socket);
    return tcp && this.connections.get(tcp);
  }

  /**
   * The TCP socket under a TLS one. Node keeps it as `_parent` (not in its typings); the guard holds TCP sockets
   * because that is all there is before the handshake ends.
   */
  private tcpSocketOf(socket: Duplex): Socket | undefined {
    const parent = (socket as Duplex & { _parent?: unknown })._parent;
    const candidate = parent ?? socket;
    return this.connections.has(candidate as Socket) ? (candidate as Socket) : undefined;
  }
}
