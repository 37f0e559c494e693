// Posts one ConversionReview to a CRD's conversion webhook over HTTPS: to its URL, or to a ready endpoint of the
// Service it names (as the admission webhooks do, the apiserver dials the endpoint, not the ClusterIP, and checks
// the certificate against the service's DNS name). Failures are worded as kube-apiserver's Go client words them.
import { Agent, request } from 'node:https';
import { isIP } from 'node:net';
import { RESOURCES, type ApiextensionsV1WebhookClientConfig, type EndpointSlice, type Service } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';

/** kube-apiserver's client for conversion webhooks gives up after 30 s. */
const TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;
const DEFAULT_SERVICE_PORT = 443;
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

interface Address {
  host: string;
  port: number;
}

interface Target {
  url: URL;
  /** The name the certificate must carry; undefined for an IP address. */
  servername?: string;
  service?: { namespace: string; name: string; port: number };
}

function targetOf(config: ApiextensionsV1WebhookClientConfig): Target {
  if (config.url) {
    const url = new URL(config.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return { url, ...(isIP(host) ? {} : { servername: host }) };
  }
  const service = config.service;
  if (!service) throw new Error('the conversion webhook clientConfig has neither url nor service');
  const port = service.port ?? DEFAULT_SERVICE_PORT;
  const path = service.path ?? '/';
  const servername = `${service.name}.${service.namespace}.svc`;
  return {
    url: new URL(`https://${servername}:${port}${path.startsWith('/') ? path : `/${path}`}`),
    servername,
    service: { namespace: service.namespace, name: service.name, port },
  };
}

/** A Node network or TLS error as Go's net/http and crypto/x509 say it. */
function describe(err: NodeJS.ErrnoException, address: string): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${address}: connect: connection refused`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${address}: no such host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: ${(err as { reason?: string }).reason ?? err.message}`;
    case 'ECONNRESET':
      return 'EOF';
    default:
      return err.message;
  }
}

/** One CRD's webhook: a kept-alive connection pool trusting its caBundle (base64 PEM). */
export class ConversionTransport {
  private readonly agent: Agent;
  private readonly target: Target;

  constructor(
    config: ApiextensionsV1WebhookClientConfig,
    private readonly client: ApiClient,
  ) {
    this.target = targetOf(config);
    const ca = config.caBundle ? Buffer.from(config.caBundle, 'base64').toString('utf8') : undefined;
    this.agent = new Agent({ keepAlive: true, maxSockets: 32, ...(ca ? { ca } : {}) });
  }

  close(): void {
    this.agent.destroy();
  }

  /** Posts `body`; the parsed JSON answer, or an Error saying `Post "<url>": <why>`. */
  async post(body: string): Promise<unknown> {
    const shown = `Post "${this.target.url.href}"`;
    const signal = AbortSignal.timeout(TIMEOUT_MS);
    let address: Address;
    try {
      address = this.target.service ? await this.resolve(this.target.service) : this.urlAddress();
    } catch (err) {
      throw new Error(`${shown}: ${(err as Error).message}`);
    }
    return this.exchange(address, body, signal, shown);
  }

  private urlAddress(): Address {
    const url = this.target.url;
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || DEFAULT_SERVICE_PORT) };
  }

  /** A ready endpoint of the service's port, from its EndpointSlices. */
  private async resolve(reference: { namespace: string; name: string; port: number }): Promise<Address> {
    const service = await this.client.get<Service>(RESOURCES.services, reference.name, reference.namespace).catch(() => undefined);
    if (!service) throw new Error(`service "${reference.name}" not found`);
    const servicePort = (service.spec?.ports ?? []).find((p) => p.port === reference.port);
    if (!servicePort) throw new Error(`no service port ${reference.port} found for service "${reference.name}"`);
    const slices = await this.client.list<EndpointSlice>(RESOURCES.endpointslices, reference.namespace, {
      labelSelector: `${SERVICE_NAME_LABEL}=${reference.name}`,
    });
    const candidates: Address[] = [];
    for (const slice of slices.items) {
      if (slice.addressType === 'FQDN') continue;
      const port = (slice.ports ?? []).find((p) => (p.name ?? '') === (servicePort.name ?? ''))?.port;
      if (port === undefined || port === null) continue;
      for (const endpoint of slice.endpoints ?? []) {
        if (endpoint.conditions?.ready === false || !endpoint.addresses[0]) continue;
        candidates.push({ host: endpoint.addresses[0], port });
      }
    }
    if (candidates.length === 0) throw new Error(`service "${reference.name}" has no ready endpoints for port ${reference.port}`);
    return candidates[Math.floor(Math.random() * candidates.length)]!;
  }

  private exchange(address: Address, body: string, signal: AbortSignal, shown: string): Promise<unknown> {
    const url = this.target.url;
    const hostPort = isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (why: string) => {
        if (settled) return;
        settled = true;
        reject(new Error(`${shown}: ${why}`));
      };
      const req = request(
        {
          method: 'POST',
          host: address.host,
          port: address.port,
          path: `${url.pathname}${url.search}`,
          agent: this.agent,
          signal,
          ...(this.target.servername ? { servername: this.target.servername } : {}),
          headers: { host: url.host, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_RESPONSE_BYTES) return void chunks.push(chunk);
            fail(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`);
            req.destroy();
          });
          res.on('error', (err) => fail(describe(err, hostPort)));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            if (status < 200 || status > 299) return fail(`the server responded with the status code ${status} but did not return more information`);
            try {
              const parsed: unknown = JSON.parse(text);
              if (!settled) {
                settled = true;
                resolve(parsed);
              }
            } catch {
              fail('the answer is not JSON');
            }
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => fail(err.name === 'AbortError' ? 'context deadline exceeded' : describe(err, hostPort)));
      req.end(body);
    });
  }
}
