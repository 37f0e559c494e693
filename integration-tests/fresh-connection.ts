import { Agent, request } from 'node:https';

/** Where a test's requests go: the API server's URL, its CA and a bearer token. */
export interface HttpsTarget {
  url: string;
  ca: Buffer;
  token: string;
}

/**
 * One request on a connection of its own (a fresh agent, no keep-alive): with several API server threads, each new
 * connection lands on whichever thread accepts it. Answers the status and the body as text.
 */
export function sendOnFreshConnection(target: HttpsTarget, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca: target.ca, keepAlive: false });
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${target.url}${path}`,
      {
        method,
        agent,
        headers: { authorization: `Bearer ${target.token}`, accept: 'application/json', ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          agent.destroy();
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
