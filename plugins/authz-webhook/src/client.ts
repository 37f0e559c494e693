import { Agent, request } from 'node:https';
import type { SubjectAccessReviewSpec, SubjectAccessReviewStatus } from '@skiff/api';
import type { WebhookConnection } from './connection.js';
import { MAX_RESPONSE_BYTES } from './names.js';
import { reviewRequest, reviewStatus } from './review.js';

/** Posts SubjectAccessReviews to the webhook over one pool of kept-alive TLS connections. */
export class WebhookClient {
  private readonly agent: Agent;

  constructor(
    private readonly connection: WebhookConnection,
    private readonly timeoutMs: number,
  ) {
    this.agent = new Agent({
      keepAlive: true,
      ...(connection.ca ? { ca: connection.ca } : {}),
      ...(connection.cert ? { cert: connection.cert, key: connection.key } : {}),
    });
  }

  /** The webhook's answer to one review; throws when it does not answer in time, or not with a review. */
  review(spec: SubjectAccessReviewSpec): Promise<SubjectAccessReviewStatus> {
    const body = JSON.stringify(reviewRequest(spec));
    const { url, token } = this.connection;
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'content-length': Buffer.byteLength(body),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) req.destroy(new Error(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on('end', () => {
            clearTimeout(deadline);
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            if (status < 200 || status > 299) return reject(new Error(`the webhook answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`));
            try {
              resolve(reviewStatus(JSON.parse(text)));
            } catch (err) {
              reject(err instanceof SyntaxError ? new Error('the answer is not JSON') : err);
            }
          });
          res.on('error', reject);
        },
      );
      // One deadline for the whole exchange: connecting, the TLS handshake, and the answer.
      const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      req.on('error', (err) => {
        clearTimeout(deadline);
        reject(err);
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
