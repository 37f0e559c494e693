// Posts one ConversionReview to a CRD's conversion webhook over HTTPS: to its URL, or to a ready endpoint of the
// Service it names (as the admission webhooks do, the apiserver dials the endpoint, not the ClusterIP, and checks
// the certificate against the service's DNS name). Failures are worded as kube-apiserver's Go client words them.
import { Agent } from 'node:https';
import { isIP } from 'node:net';
import { RESOURCES, type ApiextensionsV1WebhookClientConfig, type EndpointSlice, type Service } from '@skiff/api';
import { postWebhook } from '@skiff/client';
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
    return postWebhook({
      agent: this.agent,
      url: this.target.url,
      address,
      servername: this.target.servername,
      body,
      signal,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      failure: (why) => new Error(`${shown}: ${why}`),
      statusFailure: (status) => `the server responded with the status code ${status} but did not return more information`,
    });
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
}
