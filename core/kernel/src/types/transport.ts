import type { Duplex } from 'node:stream';
import type { KubeObject, Status, UserInfo } from '@skiff/api';

/**
 * One API request, independent of how it arrived: the fastify server builds it from an HTTP request,
 * the in-process loopback client builds it directly. Both go through the same pipeline.
 */
export interface ApiRequest {
  /** HEAD and OPTIONS reach resource handlers only through the proxy subresources; elsewhere HEAD is a GET without a body. */
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';
  /** Path without the query string: /api/v1/namespaces/default/pods */
  path: string;
  query: Record<string, string | undefined>;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /**
   * The raw body (HTTP) or an already-built object (loopback). Requests to the proxy subresources and to
   * aggregated APIs carry it unread, as a Readable, so it streams through to the backend.
   */
  body?: Buffer | string | unknown;
  /** Authentication inputs besides headers. */
  remoteAddress?: string;
  /** DER-encoded client certificate chain presented over TLS, leaf first. */
  peerCertificates?: Buffer[];
  /** Aborted when the client goes away (watch streams end). */
  signal?: AbortSignal;
  /**
   * Every value of each query parameter, in order, for the parameters that repeat (exec's `command`); `query`
   * keeps the first. Set by transports that can upgrade a connection.
   */
  queryAll?: Record<string, string[]>;
}

export interface WatchEvent<T = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T | Status;
}

export interface ApiResponse {
  status: number;
  headers?: Record<string, string>;
  /** An object (sent as JSON), a string or buffer (sent as is), or a stream of watch events. */
  body?: unknown;
  /** For watch responses: events until the request's signal aborts or the watch ends. */
  stream?: AsyncIterable<WatchEvent>;
  /** For log-like responses: text chunks; for protobuf watches, length-prefixed frames. */
  textStream?: AsyncIterable<string | Uint8Array>;
  /**
   * For connection upgrades (exec, attach, port-forward): takes the client's connection over once the
   * request has passed the pipeline. It answers on the socket itself — a 101 and the new protocol, or an
   * HTTP error — and owns the socket from then on. `head` holds bytes the client sent after the request's
   * headers. Only a transport that received an upgrade request (`Connection: Upgrade`) calls it; others
   * answer `status` (101) as an error.
   */
  upgrade?: (socket: Duplex, head: Buffer) => void;
}

/**
 * Handles one API request through the full pipeline. The API server registers itself in the container
 * as `apiHandler`; in-process components (controllers, scheduler, kubelets) call it through the loopback
 * client, which skips only the socket.
 */
export interface ApiHandler {
  handle(request: ApiRequest): Promise<ApiResponse>;
  /**
   * A bearer token that the API server's built-in loopback authenticator maps to `user`. In-process
   * clients send it like any token, so authentication, authorization and admission still run.
   */
  issueLoopbackToken(user: UserInfo): string;
}
