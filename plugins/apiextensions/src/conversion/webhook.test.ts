import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type EndpointSlice, type KubeObject, type Service } from '@skiff/api';
import { ensurePki } from '@skiff/apiserver';
import { startTestCluster, type TestCluster } from '@skiff/testing';
import { WebhookConverter } from './webhook.js';

// The converter against a real HTTPS webhook on 127.0.0.1 (certificate for 127.0.0.1 and converter.hooks.svc,
// signed by a CA made here). The webhook converts as upstream's e2e converter does: v1's `hostPort: "h:p"` is
// v2's `host` and `port`. Paths choose how it misbehaves.

const NS = 'hooks';
const dir = mkdtempSync(join(tmpdir(), 'apiextensions-conversion-'));
let server: Server;
let port = 0;
let caBundle = '';
let cluster: TestCluster;
const reviews: { path: string; body: Record<string, any> }[] = [];

function convert(object: Record<string, any>, to: string): Record<string, any> {
  const { hostPort, host, port: p, ...rest } = object;
  if (to.endsWith('/v2') && hostPort !== undefined) {
    const [h, q] = String(hostPort).split(':');
    return { ...rest, apiVersion: to, host: h, port: q };
  }
  if (to.endsWith('/v1') && host !== undefined) return { ...rest, apiVersion: to, hostPort: `${host}:${p}` };
  return { ...object, apiVersion: to };
}

function answer(path: string, review: Record<string, any>): unknown {
  const { uid, desiredAPIVersion, objects } = review.request;
  let converted: Record<string, any>[] = objects.map((o: Record<string, any>) => convert(o, desiredAPIVersion));
  const result = { status: 'Success' };
  const response = (extra: Record<string, unknown> = {}) => ({
    apiVersion: review.apiVersion,
    kind: 'ConversionReview',
    response: { uid, convertedObjects: converted, result, ...extra },
  });
  switch (path) {
    case '/wrong-uid':
      return { ...response(), response: { ...response().response, uid: 'not-mine' } };
    case '/refuse':
      return response({ result: { status: 'Failure', message: 'cannot convert that' } });
    case '/rename':
      converted = converted.map((o) => ({ ...o, metadata: { ...o.metadata, name: 'other' } }));
      return response();
    case '/stay':
      converted = objects;
      return response();
    case '/relabel':
      converted = converted.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { converted: 'yes' }, resourceVersion: '999', generation: 7 } }));
      return response();
    case '/short':
      converted = [];
      return response();
    default:
      return response();
  }
}

beforeAll(async () => {
  const pki = ensurePki(dir, `converter.${NS}.svc`);
  caBundle = Buffer.from(pki.caPem).toString('base64');
  server = createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const review = JSON.parse(body);
      reviews.push({ path: req.url ?? '', body: review });
      if (req.url === '/broken') return void res.writeHead(500).end('boom');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(req.url ?? '', review)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  cluster = await startTestCluster({ plugins: [] });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const cr = (name: string, extra: Record<string, unknown> = { hostPort: 'localhost:8080' }, apiVersion = 'stable.example.com/v1'): KubeObject =>
  ({ apiVersion, kind: 'Crontab', metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '5', labels: { a: 'b' } }, ...extra }) as KubeObject;

function converter(path: string, versions = ['v1', 'v1beta1']) {
  return new WebhookConverter({ conversionReviewVersions: versions, clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle } }, cluster.client);
}

describe('Webhook conversion over HTTPS', () => {
  it('posts a v1 ConversionReview and takes the converted object, its metadata as it was', async () => {
    reviews.length = 0;
    const converted = await converter('/convert').convert(cr('one'), 'stable.example.com/v2');
    expect(converted).toEqual({ ...cr('one', {}, 'stable.example.com/v2'), host: 'localhost', port: '8080' });
    expect(reviews).toHaveLength(1);
    expect(reviews[0]!.body).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { desiredAPIVersion: 'stable.example.com/v2', objects: [cr('one')] },
    });
    expect(reviews[0]!.body.request.uid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends nothing for an object already in the wanted version', async () => {
    reviews.length = 0;
    const v2 = cr('two', { host: 'h', port: '1' }, 'stable.example.com/v2');
    expect(await converter('/convert').convert(v2, 'stable.example.com/v2')).toBe(v2);
    expect(reviews).toHaveLength(0);
  });

  it('speaks v1beta1 when the CRD lists it first, without holding the answer to its uid', async () => {
    reviews.length = 0;
    const converted = await converter('/wrong-uid', ['v1beta1', 'v1']).convert(cr('one'), 'stable.example.com/v2');
    expect(converted.apiVersion).toBe('stable.example.com/v2');
    expect(reviews[0]!.body.apiVersion).toBe('apiextensions.k8s.io/v1beta1');
    expect(() => new WebhookConverter({ conversionReviewVersions: ['v2'] }, cluster.client)).toThrow('no supported conversion review versions');
  });

  it('keeps labels and annotations the webhook changed, nothing else of metadata', async () => {
    const converted = await converter('/relabel').convert(cr('one'), 'stable.example.com/v2');
    expect(converted.metadata).toEqual({ name: 'one', namespace: 'ns', uid: 'uid-one', resourceVersion: '5', labels: { converted: 'yes' } });
  });

  it.each([
    ['/broken', `failed: Post "https://127.0.0.1:PORT/broken": the server responded with the status code 500 but did not return more information`],
    ['/wrong-uid', 'failed: expected response.uid="UID", got "not-mine"'],
    ['/refuse', 'failed: cannot convert that'],
    ['/rename', 'returned invalid object: must have the same name: one != other'],
    ['/stay', 'returned invalid object at index 0: invalid groupVersion (expected stable.example.com/v2, received stable.example.com/v1)'],
    ['/short', 'returned 0 objects, expected 1'],
  ])('refuses what %s answers as kube-apiserver words it', async (path, message) => {
    reviews.length = 0;
    const failure = await converter(path)
      .convert(cr('one'), 'stable.example.com/v2')
      .catch((err: Error) => err);
    const uid = reviews[0]?.body.request.uid as string;
    expect((failure as Error).message).toBe(
      `conversion webhook for stable.example.com/v1, Kind=Crontab ${message.replace('PORT', String(port)).replace('UID', uid)}`,
    );
  });

  it('says so when the certificate is not signed by the caBundle', async () => {
    const other = mkdtempSync(join(tmpdir(), 'apiextensions-conversion-ca-'));
    try {
      const foreign = Buffer.from(ensurePki(other, '127.0.0.1').caPem).toString('base64');
      const failing = new WebhookConverter(
        { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle: foreign } },
        cluster.client,
      );
      await expect(failing.convert(cr('one'), 'stable.example.com/v2')).rejects.toThrow(
        `conversion webhook for stable.example.com/v1, Kind=Crontab failed: Post "https://127.0.0.1:${port}/convert": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
      );
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('reaches a service reference at a ready endpoint of the service, checking the certificate against the service name', async () => {
    const client = cluster.client;
    await client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const service: Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'converter', namespace: NS },
      spec: { ports: [{ name: 'https', port: 9443 }] },
    };
    await client.create(RESOURCES.services, service, NS);
    const viaService = new WebhookConverter(
      { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: NS, name: 'converter', path: '/convert', port: 9443 }, caBundle } },
      client,
    );
    await expect(viaService.convert(cr('one'), 'stable.example.com/v2')).rejects.toThrow(
      'failed: Post "https://converter.hooks.svc:9443/convert": service "converter" has no ready endpoints for port 9443',
    );
    const slice: EndpointSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'converter-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'converter' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    };
    await client.create(RESOURCES.endpointslices, slice, NS);
    reviews.length = 0;
    expect(await viaService.convert(cr('one'), 'stable.example.com/v2')).toMatchObject({ host: 'localhost', port: '8080' });
    expect(reviews.map((r) => r.path)).toEqual(['/convert']);
    viaService.close();
  });
});
