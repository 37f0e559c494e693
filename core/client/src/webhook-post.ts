// One JSON POST to a webhook over HTTPS (admission and CRD conversion webhooks): to an address already
// resolved, through the caller's kept-alive pool, with failures worded as kube-apiserver's Go client words them.
import { request, type Agent } from 'node:https';
import { isIP } from 'node:net';
import { describeDialError } from './dial-errors.js';

/** One POST to a webhook: where, what, and how failures are worded. */
export interface WebhookPostOptions {
  /** The caller's connection pool (it trusts the webhook's caBundle). */
  agent: Agent;
  /** The webhook's URL: its path and query are posted to, its host is sent as Host. */
  url: URL;
  /** Where to connect. */
  address: { host: string; port: number };
  /** The name the server's certificate must carry; undefined for an IP address. */
  servername?: string;
  /** The JSON to post. */
  body: string;
  /** Aborting it ends the exchange with `context deadline exceeded`. */
  signal: AbortSignal;
  /** A longer answer fails. */
  maxResponseBytes: number;
  /** The error to reject with, given why the exchange failed. */
  failure: (why: string) => Error;
  /** Why a non-2xx answer failed, in the caller's words. */
  statusFailure: (status: number, text: string) => string;
}

/** A reused kept-alive connection turned out closed before anything was answered. */
class StaleConnection extends Error {}

/**
 * Posts `options.body` and gives back the parsed JSON answer; rejects with `options.failure(why)` when there
 * is no 2xx JSON answer before the signal aborts. A kept-alive connection the server closed while idle fails
 * at once: one fresh connection is tried.
 */
export async function postWebhook(options: WebhookPostOptions): Promise<unknown> {
  try {
    return await exchange(options);
  } catch (err) {
    if (!(err instanceof StaleConnection)) throw err;
    return await exchange(options);
  }
}

function exchange(options: WebhookPostOptions): Promise<unknown> {
  const { address, url, body, signal } = options;
  const hostPort = isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      reject(options.failure(why));
    };
    const req = request(
      {
        method: 'POST',
        host: address.host,
        port: address.port,
        path: `${url.pathname}${url.search}`,
        agent: options.agent,
        ...(options.servername ? { servername: options.servername } : {}),
        headers: { host: url.host, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxResponseBytes) {
            fail(`the answer is larger than ${options.maxResponseBytes} bytes`);
            req.destroy();
          } else chunks.push(chunk);
        });
        res.on('end', () => {
          if (settled) return;
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status > 299) return fail(options.statusFailure(status, text));
          try {
            const parsed: unknown = JSON.parse(text);
            settled = true;
            resolve(parsed);
          } catch {
            fail('the answer is not JSON');
          }
        });
        res.on('error', (err) => fail(describeDialError(err, hostPort)));
      },
    );
    const onAbort = () => {
      fail('context deadline exceeded');
      req.destroy();
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => signal.removeEventListener('abort', onAbort));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (req.reusedSocket && !settled && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        settled = true;
        reject(new StaleConnection());
        return;
      }
      fail(describeDialError(err, hostPort));
    });
    req.end(body);
  });
}
