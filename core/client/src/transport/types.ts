import type { ApiRequest, WatchEvent } from '@skiff/kernel';

/** What a transport sends: an API request without the server-side authentication inputs. */
export type TransportRequest = Pick<ApiRequest, 'method' | 'path' | 'query' | 'headers' | 'body' | 'signal'>;

/**
 * A successful (2xx) answer. Transports throw `ApiError` for any other status, so callers only see
 * responses worth reading. A watch request answers with `stream`; everything else with `body`.
 */
export interface TransportResponse {
  status: number;
  body?: unknown;
  stream?: AsyncIterable<WatchEvent>;
}

/** Carries API requests to a server: in-process (loopback) or over the network (HTTPS). */
export interface Transport {
  request(request: TransportRequest): Promise<TransportResponse>;
  /** Releases pooled connections; in-flight requests are not affected. */
  close?(): void;
}

/** Watch requests are the ones whose answer is a stream of events rather than one body. */
export function isWatchRequest(request: Pick<TransportRequest, 'query'>): boolean {
  return request.query.watch === 'true' || request.query.watch === '1';
}
