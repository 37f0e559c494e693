import type { KubeObject, Status, UserInfo } from '@skiff/api';

/**
 * One API request, independent of how it arrived: the fastify server builds it from an HTTP request,
 * the in-process loopback client builds it directly. Both go through the same pipeline.
 */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path without the query string: /api/v1/namespaces/default/pods */
  path: string;
  query: Record<string, string | undefined>;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /** The raw body (HTTP) or an already-built object (loopback). */
  body?: Buffer | string | unknown;
  /** Authentication inputs besides headers. */
  remoteAddress?: string;
  /** DER-encoded client certificate chain presented over TLS, leaf first. */
  peerCertificates?: Buffer[];
  /** Aborted when the client goes away (watch streams end). */
  signal?: AbortSignal;
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
