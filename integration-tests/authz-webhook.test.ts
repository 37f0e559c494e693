import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ensurePki } from '@skiff/apiserver';
import { kubectlOn, kubectlVersions } from './clients.js';
import { runSkiffExpectingFailure, startSkiff, tempDir, type RunningSkiff } from './harness.js';

// The Webhook authorizer in a real `skiff up` (@skiff/plugin-authz-webhook, the dev preset's always-allow removed and
// always-deny at the catch-all: the webhook decides for everyone but system:masters, the cluster's components included),
// asking a real HTTPS webhook on 127.0.0.1 with its own CA, driven by the real kubectl 1.36 as user x (a static
// token): the webhook allows x to read pods and denies deletes; what it has no opinion on is forbidden. Every
// question reaches the webhook once: repeated requests are answered from the decision cache.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('authz-webhook');
const dataDir = join(project, 'data');
const cacheDir = tempDir('authz-webhook-cache');
const X_TOKEN = 'x-token-0123456789abcdef';
const SLOW_TOKEN = 'slow-token-0123456789abcdef';
let skiff: RunningSkiff;
let webhook: Server;
let clusterCa: string;
const reviews: any[] = [];
const kubeconfigX = join(project, 'x.kubeconfig');
const x = kubectlOn(kubectl136.path, () => kubeconfigX, cacheDir);
const admin = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

/**
 * The webhook's policy, the cluster's only authorizer besides system:masters: the cluster's own components
 * (system:kube-controller-manager, system:kube-scheduler, system:node:…, service accounts) may do anything;
 * discovery and access reviews for everyone; pods readable by x, deletes denied to x.
 */
function decide(spec: any): { allowed: boolean; denied?: boolean; reason?: string } {
  if (spec.user.startsWith('system:')) return { allowed: true };
  const resource = spec.resourceAttributes;
  const nonResource = spec.nonResourceAttributes;
  if (nonResource) return nonResource.verb === 'get' && /^\/(api|apis|openapi)(\/|$)/.test(nonResource.path) ? { allowed: true } : { allowed: false };
  if (resource.group === 'authorization.k8s.io' && resource.resource.startsWith('selfsubject')) return { allowed: true };
  if (spec.user === 'x' && ['get', 'list', 'watch'].includes(resource.verb) && resource.resource === 'pods') return { allowed: true, reason: 'x reads pods' };
  if (spec.user === 'x' && resource.verb === 'delete') return { allowed: false, denied: true, reason: 'x may not delete anything' };
  return { allowed: false };
}

beforeAll(async () => {
  const pki = ensurePki(mkdtempSync(join(project, 'webhook-pki-')), '127.0.0.1');
  webhook = createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const review = JSON.parse(body);
      reviews.push(review);
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...review, status: decide(review.spec) }));
      // The slow user's questions are answered after the authorizer's timeout.
      if (review.spec.user === 'slow') setTimeout(answer, 3_000);
      else answer();
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  writeFileSync(join(project, 'webhook-ca.crt'), pki.caPem);
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(
    join(dataDir, 'tokens.csv'),
    `admin-token-0123456789abcdef,admin,admin,"system:masters"\n${X_TOKEN},x,x-uid,"team-a"\n${SLOW_TOKEN},slow,slow-uid,""\n`,
    { mode: 0o600 },
  );
  const config = {
    plugins: [
      ['@skiff/plugin-authz-always-allow', false],
      [
        '@skiff/plugin-authz-webhook',
        {
          url: `https://127.0.0.1:${(webhook.address() as AddressInfo).port}/authorize`,
          caFile: 'webhook-ca.crt',
          timeoutMs: 500,
          authorizedTTLSeconds: 300,
          unauthorizedTTLSeconds: 300,
        },
      ],
      // What the webhook has no opinion on is denied with a reason, rather than by nobody deciding.
      '@skiff/plugin-authz-always-deny',
    ],
  };
  writeFileSync(join(project, 'skiff.config.mjs'), `export default ${JSON.stringify(config, null, 2)};\n`);
  skiff = await startSkiff(['--data-dir', dataDir], { cwd: project });
  const adminConfig = parse(readFileSync(skiff.kubeconfig, 'utf8'));
  clusterCa = Buffer.from(adminConfig.clusters[0].cluster['certificate-authority-data'], 'base64').toString('utf8');
  writeFileSync(
    kubeconfigX,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'skiff', cluster: adminConfig.clusters[0].cluster }],
      users: [{ name: 'x', user: { token: X_TOKEN } }],
      contexts: [{ name: 'x', context: { cluster: 'skiff', user: 'x', namespace: 'default' } }],
      'current-context': 'x',
    }),
  );
  await admin.ok('run', 'web', '--image=nginx', '--namespace=default');
});
afterAll(async () => {
  await skiff?.stop();
  webhook?.closeAllConnections();
  await new Promise((resolve) => (webhook ? webhook.close(resolve) : resolve(undefined)));
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

/** The reviews the webhook received about a resource verb of x. */
const asked = (verb: string, resource: string) =>
  reviews.filter((r) => r.spec.user === 'x' && r.spec.resourceAttributes?.verb === verb && r.spec.resourceAttributes.resource === resource);

describe('user x, as the webhook decides', () => {
  it('may get and list pods: the webhook allowed it', async () => {
    expect(await x.ok('get', 'pod', 'web', '-o', 'name')).toBe('pod/web\n');
    expect(await x.ok('get', 'pods', '-o', 'name')).toBe('pod/web\n');
    expect(asked('get', 'pods')).toEqual([
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          resourceAttributes: { namespace: 'default', verb: 'get', version: 'v1', resource: 'pods', name: 'web' },
          user: 'x',
          groups: ['team-a', 'system:authenticated'],
          uid: 'x-uid',
        },
      },
    ]);
  });

  it('may not delete the pod: the webhook denied it, with its reason', async () => {
    const result = await x.kubectl(['delete', 'pod', 'web']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Error from server (Forbidden): pods "web" is forbidden: User "x" cannot delete resource "pods" in API group "" in the namespace "default": x may not delete anything',
    );
    expect(await admin.ok('get', 'pod', 'web', '-o', 'name')).toBe('pod/web\n');
  });

  it('is forbidden what the webhook has no opinion on (always-deny answers it)', async () => {
    const result = await x.kubectl(['get', 'namespaces']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Error from server (Forbidden): namespaces is forbidden: User "x" cannot list resource "namespaces" in API group "" at the cluster scope: Everything is forbidden.',
    );
  });

  it('gets the same answers from kubectl auth can-i', async () => {
    expect(await x.kubectl(['auth', 'can-i', 'get', 'pods'])).toMatchObject({ code: 0, stdout: 'yes\n' });
    expect(await x.kubectl(['auth', 'can-i', 'delete', 'pods'])).toMatchObject({ code: 1, stdout: 'no - x may not delete anything\n' });
  });
});

describe('the decision cache', () => {
  it('answers repeated requests: no question reaches the webhook twice', async () => {
    // Each of these was asked above already. (Only x's questions count: the cluster's own components may ask
    // something new meanwhile.)
    const asked = () => reviews.filter((review) => review.spec.user === 'x').length;
    const before = asked();
    for (let i = 0; i < 3; i++) {
      await x.ok('get', 'pod', 'web');
      await x.ok('get', 'pods');
      expect((await x.kubectl(['delete', 'pod', 'web'])).code).toBe(1);
      expect((await x.kubectl(['get', 'namespaces'])).code).toBe(1);
    }
    expect(asked()).toBe(before);
    const perQuestion = new Map<string, number>();
    for (const review of reviews) perQuestion.set(JSON.stringify(review.spec), (perQuestion.get(JSON.stringify(review.spec)) ?? 0) + 1);
    expect([...perQuestion].filter(([, count]) => count > 1)).toEqual([]);
  });
});

describe('a webhook that answers too late', () => {
  it('is no opinion after timeoutMs (failurePolicy NoOpinion): 403, in about the timeout', async () => {
    const started = performance.now();
    const answer = await new Promise<{ status?: number; body: any }>((resolve, reject) => {
      const req = request(
        new URL('/api/v1/namespaces/default/pods', skiff.server),
        { ca: clusterCa, headers: { authorization: `Bearer ${SLOW_TOKEN}` }, agent: false },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(body) }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    const elapsed = performance.now() - started;
    expect(answer).toMatchObject({
      status: 403,
      body: {
        reason: 'Forbidden',
        message: 'pods is forbidden: User "slow" cannot list resource "pods" in API group "" in the namespace "default": Everything is forbidden.',
      },
    });
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(2_500);
  });
});

describe('a wrong option', () => {
  it('stops skiff up with one line naming the plugin and the option', async () => {
    const dir = tempDir('authz-webhook-bad');
    try {
      writeFileSync(
        join(dir, 'skiff.config.mjs'),
        `export default { plugins: [['@skiff/plugin-authz-webhook', { url: 'https://authz.internal/authorize', caFile: 'nope.crt' }]] };\n`,
      );
      const result = await runSkiffExpectingFailure(['--data-dir', join(dir, 'data')], dir);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`skiff: plugin "@skiff/plugin-authz-webhook": option "caFile" cannot be read: ENOENT (${join(dir, 'nope.crt')})`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
