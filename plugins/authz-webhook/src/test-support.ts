import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { SubjectAccessReview, SubjectAccessReviewStatus } from '@skiff/api';
import { ensurePki, issueClientCertificate } from '@skiff/apiserver';

export interface Tls {
  caPem: string;
  caKeyPem: string;
  certPem: string;
  keyPem: string;
}

/** A raw answer, for webhooks that misbehave: any status and body. */
export interface RawAnswer {
  httpStatus: number;
  body: string;
}

export type Answer = (
  review: SubjectAccessReview,
  client: { certificateSubject?: string; authorization?: string },
) => SubjectAccessReviewStatus | RawAnswer | Promise<SubjectAccessReviewStatus | RawAnswer>;

/** A real authorization webhook over HTTPS on 127.0.0.1, with a CA of its own; it counts and keeps every review. */
export interface TestWebhook {
  url: string;
  tls: Tls;
  reviews: SubjectAccessReview[];
  answer: Answer;
  close(): Promise<void>;
}

/** A new CA (and its key, to issue client certificates) and a serving certificate it signed for 127.0.0.1 and localhost. */
export function newTls(): Tls {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-authz-webhook-'));
  try {
    const pki = ensurePki(dir, '127.0.0.1');
    return { caPem: pki.caPem, caKeyPem: readFileSync(pki.caKeyFile, 'utf8'), certPem: pki.certPem, keyPem: pki.keyPem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A client certificate for `user`, signed by `ca`. */
export function clientCertificate(ca: Tls, user: string): { certPem: string; keyPem: string } {
  return issueClientCertificate({ caPem: ca.caPem, caKeyPem: ca.caKeyPem }, { user });
}

export async function startTestWebhook(options: { answer: Answer; clientCa?: string; path?: string }): Promise<TestWebhook> {
  const tls = newTls();
  const path = options.path ?? '/authorize';
  const reviews: SubjectAccessReview[] = [];
  const webhook: TestWebhook = { url: '', tls, reviews, answer: options.answer, close: async () => {} };
  const server: Server = createServer(
    { cert: tls.certPem, key: tls.keyPem, ...(options.clientCa ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: true } : {}) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        if (req.method !== 'POST' || req.url !== path) {
          res.writeHead(404).end();
          return;
        }
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SubjectAccessReview;
        reviews.push(review);
        const peer = (req.socket as TLSSocket).getPeerCertificate?.();
        const answer = await webhook.answer(review, { certificateSubject: [peer?.subject?.CN].flat()[0], authorization: req.headers.authorization });
        if ('httpStatus' in answer) {
          res.writeHead(answer.httpStatus, { 'content-type': 'application/json' }).end(answer.body);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: review.apiVersion, kind: review.kind, status: answer }));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  webhook.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  webhook.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return webhook;
}
