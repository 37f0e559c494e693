// Posts AdmissionReviews to one webhook over its own pool of kept-alive TLS connections, with one deadline
// for the whole exchange (resolving a service, connecting, the handshake and the answer).
import { isIP } from 'node:net';
import { Agent } from 'node:https';
import type { AdmissionregistrationV1WebhookClientConfig } from '@skiff/api';
import { postWebhook } from '@skiff/client';
import { DEFAULT_SERVICE_PORT, MAX_RESPONSE_BYTES } from './names.js';
import type { ResolvedAddress, ServiceReference, ServiceResolver } from './service-resolver.js';

/** A failure to get an answer from the webhook; the dispatcher words it and applies the failurePolicy. */
export class CallFailure extends Error {
  override readonly name = 'CallFailure';
}

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
      return await postWebhook({
        agent: this.agent,
        url,
        address,
        servername: this.target.servername,
        body,
        signal: deadline.signal,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        failure: (why) => new CallFailure(`${shown}: ${why}`),
        statusFailure: (status, text) => `the webhook answered HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
