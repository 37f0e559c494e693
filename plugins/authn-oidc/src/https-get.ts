import { request } from 'node:https';

/** Discovery documents and key sets are small; a larger answer is refused rather than buffered. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpsGetOptions {
  /** PEM certificates to trust instead of the system's roots. */
  ca?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/**
 * A GET over HTTPS, answered as a fetch `Response`: Node 20's fetch cannot be given a CA of its own, and the
 * issuer's CA must be trusted for discovery and keys alike. Redirects are not followed (the answer is the 3xx).
 */
export function httpsGet(url: string, options: HttpsGetOptions): Promise<Response> {
  const target = new URL(url);
  if (target.protocol !== 'https:') return Promise.reject(new Error(`${url}: only https URLs are fetched`));
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: 'GET',
        headers: { accept: 'application/json', ...options.headers },
        ...(options.ca ? { ca: options.ca } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            req.destroy(new Error(`${url}: answer larger than ${MAX_BODY_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === 'string') headers.set(name, value);
            else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
          }
          const status = res.statusCode ?? 500;
          // A Response cannot carry a body with these statuses.
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, headers }));
        });
        res.on('error', reject);
      },
    );
    // One deadline for the whole exchange, however slowly the bytes come.
    const deadline = setTimeout(() => req.destroy(new Error(`${url}: no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('error', reject);
    req.end();
  });
}

/** GETs a JSON document, failing with the URL and the status on anything but a 200 with a JSON object. */
export async function getJson(url: string, options: HttpsGetOptions): Promise<Record<string, unknown>> {
  const response = await httpsGet(url, options);
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${response.statusText || 'answer'} (expected 200)`);
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch {
    throw new Error(`${url}: the answer is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${url}: the answer is not a JSON object`);
  return parsed as Record<string, unknown>;
}
