// Posts AdmissionReviews to one webhook over its own pool of kept-alive TLS connections, with one deadline
// for the whole exchange (resolving a service, connecting, the handshake and the answer).
import { isIP } from 'node:net';
import { Agent, request } from 'node:https';
import type { AdmissionregistrationV1WebhookClientConfig } from '@skiff/api';
import { DEFAULT_SERVICE_PORT, MAX_RESPONSE_BYTES } from './names.js';
import type { ResolvedAddress, ServiceReference, ServiceResolver } from './service-resolver.js';

/** A failure to get an answer from the webhook; the dispatcher words it and applies the failurePolicy. */
export class CallFailure extends Error {
  override readonly name = 'CallFailure';
}

/** A reused kept-alive connection turned out closed before anything was answered. */
class StaleConnection extends Error {}

/** Where a webhook is reached: the URL it is known by, and how to find the address to dial. */
interface Target {
  /** The URL as the error messages show it (the service's DNS name for service references). */
  display: URL;
  /** The name the server's certificate must carry (SNI and verification); undefined for an IP address. */
  servername?: string;
  service?: ServiceReference;
}

function targetOf(config: AdmissionregistrationV1WebhookClientConfig): Target {
  if (config.url) {
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      throw new CallFailure(`invalid webhook URL ${JSON.stringify(config.url)}`);
    }
    if (url.protocol !== 'https:') throw new CallFailure(`webhook URL ${JSON.stringify(config.url)} is not https`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return { display: url, servername: isIP(host) ? undefined : host };
  }
  const service = config.service;
  if (!service) throw new CallFailure('webhook clientConfig has neither url nor service');
  const dnsName = `${service.name}.${service.namespace}.svc`;
  const port = service.port ?? DEFAULT_SERVICE_PORT;
  const path = service.path ?? '/';
  const display = new URL(`https://${dnsName}:${port}${path.startsWith('/') ? path : `/${path}`}`);
  return { display, servername: dnsName, service: { namespace: service.namespace, name: service.name, port } };
}

/** A CA bundle as stored: base64 of PEM (a []byte in the API's JSON). */
function decodeCaBundle(caBundle: string | undefined): string | undefined {
  if (!caBundle) return undefined;
  const pem = Buffer.from(caBundle, 'base64').toString('utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new CallFailure('caBundle holds no PEM certificate');
  return pem;
}

const UNKNOWN_AUTHORITY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** Which names the certificate is valid for, and the one it was asked for, as Go's x509 says it. */
function altNameMismatch(err: Error & { host?: string; cert?: { subjectaltname?: string }; reason?: string }): string {
  if (!err.host || !err.cert?.subjectaltname) return err.reason ?? err.message;
  const wantIp = isIP(err.host) !== 0;
  const names = err.cert.subjectaltname
    .split(', ')
    .filter((entry) => entry.startsWith(wantIp ? 'IP Address:' : 'DNS:'))
    .map((entry) => entry.slice(entry.indexOf(':') + 1));
  return names.length ? `certificate is valid for ${names.join(', ')}, not ${err.host}` : (err.reason ?? err.message);
}

/** A Node network error in the words Kubernetes users know from kube-apiserver's Go client. */
function describe(err: NodeJS.ErrnoException & { reason?: string }, address: string): string {
  if (err.code === 'ECONNREFUSED') return `dial tcp ${address}: connect: connection refused`;
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return `dial tcp: lookup ${address}: no such host`;
  if (err.code && UNKNOWN_AUTHORITY.has(err.code)) return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (err.code === 'CERT_HAS_EXPIRED' || err.code === 'CERT_NOT_YET_VALID')
    return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
  if (err.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `tls: failed to verify certificate: x509: ${altNameMismatch(err)}`;
  if (err.code === 'ECONNRESET') return 'EOF';
  return err.message;
}

/** One webhook's connection pool and address; built again when its clientConfig changes. */
export class WebhookCaller {
  private readonly agent: Agent;
  private readonly target: Target;

  constructor(
    config: AdmissionregistrationV1WebhookClientConfig,
    private readonly resolver: ServiceResolver,
  ) {
    this.target = targetOf(config);
    const ca = decodeCaBundle(config.caBundle);
    this.agent = new Agent({ keepAlive: true, maxSockets: 64, ...(ca ? { ca } : {}) });
  }

  /**
   * Posts `body` and gives back the parsed JSON answer. Throws a CallFailure worded as kube-apiserver's
   * (`Post "<url>": <why>`) when there is no answer within `timeoutSeconds`, or no 2xx JSON answer.
   */
  async post(body: string, timeoutSeconds: number): Promise<unknown> {
    const url = new URL(this.target.display);
    url.searchParams.set('timeout', `${timeoutSeconds}s`);
    // As kube-apiserver shows it: a service reference keeps its port, even 443.
    const shown = `Post "${this.target.service ? `https://${url.hostname}:${this.target.service.port}${url.pathname}${url.search}` : url.href}"`;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutSeconds * 1000);
    try {
      let address: ResolvedAddress;
      if (this.target.service) {
        try {
          address = await this.resolver.resolve(this.target.service, deadline.signal);
        } catch (err) {
          if (deadline.signal.aborted) throw new CallFailure(`${shown}: context deadline exceeded`);
          throw new CallFailure(`${shown}: ${(err as Error).message}`);
        }
      } else {
        address = { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443) };
      }
      try {
        return await this.exchange(url, address, body, deadline.signal, shown);
      } catch (err) {
        // A kept-alive connection the server closed while idle fails at once; one fresh connection is tried.
        if (!(err instanceof StaleConnection)) throw err;
        return await this.exchange(url, address, body, deadline.signal, shown);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private exchange(url: URL, address: ResolvedAddress, body: string, signal: AbortSignal, shown: string): Promise<unknown> {
    const hostPort = isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        reject(new CallFailure(`${shown}: ${message}`));
      };
      const req = request(
        {
          method: 'POST',
          host: address.host,
          port: address.port,
          path: `${url.pathname}${url.search}`,
          agent: this.agent,
          ...(this.target.servername ? { servername: this.target.servername } : {}),
          headers: {
            host: url.host,
            'content-type': 'application/json',
            accept: 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              fail(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`);
              req.destroy();
            } else chunks.push(chunk);
          });
          res.on('end', () => {
            if (settled) return;
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            if (status < 200 || status > 299) return fail(`the webhook answered HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
            try {
              const parsed: unknown = JSON.parse(text);
              settled = true;
              resolve(parsed);
            } catch {
              fail('the answer is not JSON');
            }
          });
          res.on('error', (err) => fail(describe(err, hostPort)));
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
        fail(describe(err, hostPort));
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
