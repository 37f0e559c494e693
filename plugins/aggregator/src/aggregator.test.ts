import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { RESOURCES, type APIService, type ConfigMap, type Endpoints, type KubeObject } from '@skiff/api';
import { CHAIN_STAGE, definePlugin, type ApiServerInfo } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import aggregator from './index.js';

const GROUP = 'wardle.example.com';
const NS = 'aggr';

/** Bearer tokens of the test: alice is an ordinary user with a group and an extra. */
const testAuthn = definePlugin({
  name: 'test-authn',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.authenticate.tap({ name: 'test-authn', stage: CHAIN_STAGE.TOKEN }, (request) =>
      request.headers.authorization === 'Bearer alice-token'
        ? { user: { username: 'alice', groups: ['wardle-users', 'system:authenticated'], extra: { scopes: ['a', 'b'] } } }
        : undefined,
    );
  },
});

let plane: ControlPlane;
let info: ApiServerInfo;
let backend: Server;
let backendPort: number;
let certDir: string;
let caBundle: string;
const seen: { path: string; cn: string | undefined }[] = [];

/** A CA and a serving certificate for sample-api.aggr.svc, made with openssl as an operator would. */
function servingCertificates(dir: string) {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=wardle-ca');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', `/CN=sample-api.${NS}.svc`);
  const ext = join(dir, 'ext.cnf');
  execFileSync('sh', ['-c', `printf 'subjectAltName=DNS:sample-api.${NS}.svc\\nextendedKeyUsage=serverAuth\\n' > ${ext}`]);
  run('x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.crt', '-days', '1', '-extfile', ext);
  return { ca: readFileSync(join(dir, 'ca.crt'), 'utf8'), cert: readFileSync(join(dir, 'tls.crt'), 'utf8'), key: readFileSync(join(dir, 'tls.key'), 'utf8') };
}

/** The extension API server: trusts the front proxy's certificate (from the cluster CA) and reads the user from its headers, as sample-apiserver does. */
function startBackend(tls: { cert: string; key: string }, frontProxyCa: string): Promise<number> {
  backend = createServer({ ...tls, ca: frontProxyCa, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const subject = socket.authorized ? socket.getPeerCertificate().subject?.CN : undefined;
    const cn = Array.isArray(subject) ? subject[0] : subject;
    seen.push({ path: req.url ?? '', cn });
    if (cn !== 'front-proxy-client') {
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end('{"kind":"Status","code":401}');
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url?.startsWith('/apis/wardle.example.com/v1alpha1/redirect')) {
        res.writeHead(302, { location: '/somewhere/else' });
        return res.end();
      }
      if (req.url === `/apis/${GROUP}/v1alpha1`) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            kind: 'APIResourceList',
            apiVersion: 'v1',
            groupVersion: `${GROUP}/v1alpha1`,
            resources: [
              { name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['create', 'delete', 'get', 'list', 'watch'] },
              { name: 'flunders/status', singularName: '', namespaced: true, kind: 'Flunder', verbs: ['get', 'patch', 'update'] },
            ],
          }),
        );
      }
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
  });
  // An upgrade (a watch over WebSocket) is switched and echoed, for the front proxy only.
  backend.on('upgrade', (req: IncomingMessage, socket: TLSSocket) => {
    const subject = socket.authorized ? socket.getPeerCertificate().subject?.CN : undefined;
    if (subject !== 'front-proxy-client' || req.headers['x-remote-user'] !== 'alice')
      return socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
    socket.pipe(socket);
  });
  return new Promise((resolve) => backend.listen(0, '127.0.0.1', () => resolve((backend.address() as AddressInfo).port)));
}

function call(method: string, path: string, options: { body?: string; headers?: Record<string, string> } = {}) {
  return new Promise<{ status: number; json: any; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = httpsRequest(`${info.url}${path}`, { method, ca: info.caPem, headers: { authorization: 'Bearer alice-token', ...options.headers } });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
        resolve({ status: res.statusCode ?? 0, json, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const create = <T extends KubeObject>(type: (typeof RESOURCES)[keyof typeof RESOURCES], object: T, namespace?: string) =>
  plane.client.create<T>(type, object, namespace);

function apiService(name: string, spec: APIService['spec']): APIService {
  return { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name }, spec };
}

async function availableOf(name: string) {
  let condition: { status?: string; reason?: string; message?: string } | undefined;
  await waitFor(`an Available condition on ${name}`, async () => {
    const current = await plane.client.get<APIService>(RESOURCES.apiservices, name);
    condition = current.status?.conditions?.find((c) => c.type === 'Available');
    return condition !== undefined;
  });
  return condition!;
}

async function waitForReason(name: string, reason: string) {
  await waitFor(
    `reason ${reason} on ${name}`,
    async () => (await plane.client.get<APIService>(RESOURCES.apiservices, name)).status?.conditions?.some((c) => c.reason === reason) ?? false,
  );
  return availableOf(name);
}

beforeAll(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'skiff-aggregator-'));
  const tls = servingCertificates(certDir);
  caBundle = Buffer.from(tls.ca).toString('base64');
  plane = await startControlPlane([aggregator, testAuthn], { config: { logLevel: 'silent' } });
  info = plane.kernel.resolve('apiServerInfo');
  backendPort = await startBackend(tls, readFileSync(join(plane.dataDir, 'pki', 'ca.crt'), 'utf8'));
  await create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await create(
    RESOURCES.services,
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'sample-api' }, spec: { ports: [{ port: 7443, targetPort: backendPort }] } },
    NS,
  );
  await create<Endpoints>(
    RESOURCES.endpoints,
    { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'sample-api' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: backendPort }] }] },
    NS,
  );
  await create(
    RESOURCES.apiservices,
    apiService(`v1alpha1.${GROUP}`, {
      group: GROUP,
      version: 'v1alpha1',
      service: { namespace: NS, name: 'sample-api', port: 7443 },
      caBundle,
      groupPriorityMinimum: 2000,
      versionPriority: 200,
    }),
  );
}, 60_000);
afterAll(async () => {
  await plane?.stop();
  backend?.close();
  if (certDir) rmSync(certDir, { recursive: true, force: true });
});

describe('an APIService backed by a Service', () => {
  it('becomes Available once its discovery answers through the front proxy', async () => {
    expect(await waitForReason(`v1alpha1.${GROUP}`, 'Passed')).toMatchObject({ status: 'True', reason: 'Passed', message: 'all checks passed' });
    expect(seen.some((entry) => entry.path === `/apis/${GROUP}/v1alpha1` && entry.cn === 'front-proxy-client')).toBe(true);
  });

  it('proxies requests for its group/version with the user in the front-proxy headers and without the client credentials', async () => {
    const flunder = JSON.stringify({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Flunder', metadata: { name: 'f1' } });
    const answer = await call('POST', `/apis/${GROUP}/v1alpha1/namespaces/default/flunders?fieldManager=me`, {
      body: flunder,
      headers: { 'content-type': 'application/json', 'x-remote-user': 'mallory', 'x-remote-extra-evil': 'yes' },
    });
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({ method: 'POST', url: `/apis/${GROUP}/v1alpha1/namespaces/default/flunders?fieldManager=me`, body: flunder });
    expect(answer.json.headers).toMatchObject({
      'x-remote-user': 'alice',
      'x-remote-group': 'wardle-users, system:authenticated',
      'x-remote-extra-scopes': 'a, b',
    });
    expect(answer.json.headers.authorization).toBeUndefined();
    expect(answer.json.headers['x-remote-extra-evil']).toBeUndefined();
    expect(answer.json.headers.host).toBe(`127.0.0.1:${backendPort}`);
    const redirected = await call('GET', `/apis/${GROUP}/v1alpha1/redirect`);
    expect(redirected).toMatchObject({ status: 502, json: 'the backend attempted to redirect this request, which is not permitted' });
  });

  it('relays an upgrade to the backend with the front-proxy certificate and headers', async () => {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const req = httpsRequest(`${info.url}/apis/${GROUP}/v1alpha1/namespaces/default/flunders?watch=true`, {
        ca: info.caPem,
        headers: { authorization: 'Bearer alice-token', connection: 'Upgrade', upgrade: 'echo' },
      });
      req.on('upgrade', (_response, upgraded) => resolve(upgraded));
      req.on('response', (response) => reject(new Error(`not upgraded: ${response.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    const echoed = new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    socket.write('through the aggregator');
    expect(await echoed).toBe('through the aggregator');
    socket.destroy();
  });

  it('is listed in discovery: /apis, /apis/<group> and aggregated discovery with the backend resources', async () => {
    const groups = await call('GET', '/apis');
    const entry = groups.json.groups.find((group: { name: string }) => group.name === GROUP);
    expect(entry).toEqual({
      name: GROUP,
      versions: [{ groupVersion: `${GROUP}/v1alpha1`, version: 'v1alpha1' }],
      preferredVersion: { groupVersion: `${GROUP}/v1alpha1`, version: 'v1alpha1' },
    });
    const group = await call('GET', `/apis/${GROUP}`);
    expect(group.json).toMatchObject({ kind: 'APIGroup', name: GROUP });
    const aggregated = await call('GET', '/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
    const item = aggregated.json.items.find((candidate: { metadata: { name: string } }) => candidate.metadata.name === GROUP);
    expect(item.versions[0]).toMatchObject({
      version: 'v1alpha1',
      freshness: 'Current',
      resources: [
        {
          resource: 'flunders',
          scope: 'Namespaced',
          singularResource: 'flunder',
          responseKind: { group: GROUP, version: 'v1alpha1', kind: 'Flunder' },
          subresources: [{ subresource: 'status', verbs: ['get', 'patch', 'update'] }],
        },
      ],
    });
  });

  it('answers 503 and reports MissingEndpoints when the Service has no endpoints, and recovers', async () => {
    const endpoints = await plane.client.get<Endpoints>(RESOURCES.endpoints, 'sample-api', NS);
    await plane.client.update(RESOURCES.endpoints, { ...endpoints, subsets: [] });
    expect(await waitForReason(`v1alpha1.${GROUP}`, 'MissingEndpoints')).toMatchObject({
      status: 'False',
      message: `endpoints for service/sample-api in "${NS}" have no addresses with port name ""`,
    });
    const refused = await call('GET', `/apis/${GROUP}/v1alpha1/namespaces/default/flunders`);
    expect(refused.status).toBe(503);
    const emptied = await plane.client.get<Endpoints>(RESOURCES.endpoints, 'sample-api', NS);
    await plane.client.update(RESOURCES.endpoints, { ...emptied, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: backendPort }] }] });
    await waitForReason(`v1alpha1.${GROUP}`, 'Passed');
    expect((await call('GET', `/apis/${GROUP}/v1alpha1/namespaces/default/flunders`)).status).toBe(201);
  });
});

describe('the Available condition', () => {
  it('is Local for APIServices without a service', async () => {
    await create(RESOURCES.apiservices, apiService('v1.apps', { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 }));
    expect(await availableOf('v1.apps')).toMatchObject({ status: 'True', reason: 'Local', message: 'Local APIServices are always available' });
  });

  it('says ServiceNotFound, ServicePortError and FailedDiscoveryCheck as kube-aggregator does', async () => {
    const spec = { groupPriorityMinimum: 100, versionPriority: 10, caBundle };
    await create(
      RESOURCES.apiservices,
      apiService('v1.missing.example.com', { ...spec, group: 'missing.example.com', version: 'v1', service: { namespace: NS, name: 'nope' } }),
    );
    expect(await availableOf('v1.missing.example.com')).toMatchObject({
      status: 'False',
      reason: 'ServiceNotFound',
      message: `service/nope in "${NS}" is not present`,
    });
    await create(
      RESOURCES.apiservices,
      apiService('v1.port.example.com', { ...spec, group: 'port.example.com', version: 'v1', service: { namespace: NS, name: 'sample-api', port: 9999 } }),
    );
    expect(await availableOf('v1.port.example.com')).toMatchObject({
      reason: 'ServicePortError',
      message: `service/sample-api in "${NS}" is not listening on port 9999`,
    });
    // insecureSkipTLSVerify: the serving certificate is not checked; the backend answers this group's discovery with its echo (201).
    const insecure = { groupPriorityMinimum: 100, versionPriority: 10, insecureSkipTLSVerify: true };
    await create(
      RESOURCES.apiservices,
      apiService('v1.other.example.com', {
        ...insecure,
        group: 'other.example.com',
        version: 'v1',
        service: { namespace: NS, name: 'sample-api', port: 7443 },
      }),
    );
    const other = await availableOf('v1.other.example.com');
    expect(other.reason).toBe('Passed');
    const untrusted = Buffer.from(readFileSync(join(plane.dataDir, 'pki', 'ca.crt'))).toString('base64');
    await create(
      RESOURCES.apiservices,
      apiService('v1.untrusted.example.com', {
        ...spec,
        group: 'untrusted.example.com',
        version: 'v1',
        service: { namespace: NS, name: 'sample-api', port: 7443 },
        caBundle: untrusted,
      }),
    );
    const failed = await availableOf('v1.untrusted.example.com');
    expect(failed).toMatchObject({ status: 'False', reason: 'FailedDiscoveryCheck' });
    expect(failed.message).toMatch(new RegExp(`^failing or missing response from https://127\\.0\\.0\\.1:${backendPort}/apis/untrusted\\.example\\.com/v1: `));
  });
});

describe('the front proxy', () => {
  it('publishes its requestheader settings in kube-system/extension-apiserver-authentication', async () => {
    const configMap = await plane.client.get<ConfigMap>(RESOURCES.configmaps, 'extension-apiserver-authentication', 'kube-system');
    expect(configMap.data).toMatchObject({
      'requestheader-allowed-names': '["front-proxy-client"]',
      'requestheader-username-headers': '["X-Remote-User"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
    });
    expect(configMap.data?.['requestheader-client-ca-file']).toContain('BEGIN CERTIFICATE');
  });
});
