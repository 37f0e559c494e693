import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import forge from 'node-forge';
import { kubectlOn, kubectlVersions } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// Admission webhooks in a real `skiff up` (the dev preset plus @skiff/plugin-admission-webhooks), driven by the
// real kubectl 1.36, calling a real HTTPS server started here whose certificate is signed by a CA made here and
// given to the configurations as caBundle: a mutating webhook adds a label (and a warning), a validating one
// reached through a Service (a selector-less Service with a manual EndpointSlice to 127.0.0.1) refuses with its
// message, a Service with only Endpoints is reached too, slow webhooks follow their failurePolicy within
// timeoutSeconds, namespace and object selectors and matchConditions leave requests out, dry runs reach webhooks
// with dryRun set, IfNeeded webhooks are called again after a later webhook changed the object, a caBundle of
// another CA does not verify, and configurations take effect (and stop) within a second.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('admission-webhooks');
const cacheDir = tempDir('admission-webhooks-cache');
let skiff: RunningSkiff;
let server: Server;
let port = 0;
const { kubectl, ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

/** Every AdmissionReview the server received, with the path it came to. */
const received: { path: string; review: any }[] = [];
const reviewsAt = (path: string) => received.filter((r) => r.path === path).map((r) => r.review);

const SERVICE_DNS_NAMES = ['hooks.webhook-system.svc', 'legacy.webhook-system.svc'];

function keys() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privateKey: forge.pki.privateKeyFromPem(privateKey), publicKey: forge.pki.publicKeyFromPem(publicKey), pem: privateKey };
}

function certificate(subject: string, publicKey: forge.pki.PublicKey, issuer: forge.pki.Certificate | undefined, extensions: object[]) {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = String(Math.floor(Math.random() * 1e9) + 1);
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  cert.setIssuer(issuer ? issuer.subject.attributes : [{ name: 'commonName', value: subject }]);
  cert.setExtensions(extensions);
  return cert;
}

/** A CA, and a serving certificate it signs for 127.0.0.1 and the webhook Services' DNS names. */
function makePki() {
  const caKeys = keys();
  const ca = certificate('webhook-test-ca', caKeys.publicKey, undefined, [
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  const serverKeys = keys();
  const serving = certificate('webhook-server', serverKeys.publicKey, ca, [
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [{ type: 7, ip: '127.0.0.1' }, ...SERVICE_DNS_NAMES.map((value) => ({ type: 2, value }))],
    },
  ]);
  serving.sign(caKeys.privateKey, forge.md.sha256.create());
  return { caPem: forge.pki.certificateToPem(ca), certPem: forge.pki.certificateToPem(serving), keyPem: serverKeys.pem };
}

/** Another CA, which signed nothing the server uses. */
function otherCaPem(): string {
  const caKeys = keys();
  const ca = certificate('someone-else', caKeys.publicKey, undefined, [{ name: 'basicConstraints', cA: true }]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(ca);
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const jsonPatch = (ops: object[]) => ({ patchType: 'JSONPatch', patch: b64(JSON.stringify(ops)) });

/** Adds `{key: value}` to the object's labels, whether it has labels or not. */
const addLabel = (object: any, key: string, value: string) =>
  object.metadata.labels
    ? [{ op: 'add', path: `/metadata/labels/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, value }]
    : [{ op: 'add', path: '/metadata/labels', value: { [key]: value } }];

/** What the test server answers at each path. */
function answer(path: string, request: any): object {
  switch (path) {
    case '/add-label':
      return {
        allowed: true,
        ...jsonPatch(addLabel(request.object, 'webhook.example.com/seen', 'yes')),
        warnings: [`add-label saw configmap ${request.name}`],
        auditAnnotations: { seen: request.name },
      };
    case '/deny':
      return request.object?.data?.forbidden !== undefined
        ? { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'the key "forbidden" is not allowed in this namespace' } }
        : { allowed: true };
    case '/count':
      // Marks the object with how many times it has been here: a second call shows the reinvocation.
      return {
        allowed: true,
        ...jsonPatch(addLabel(request.object, 'first-webhook-calls', String(reviewsAt('/count').filter((r) => r.request.name === request.name).length))),
      };
    case '/mark':
      return { allowed: true, ...jsonPatch(addLabel(request.object, 'second-webhook', 'was-here')) };
    default:
      return { allowed: true };
  }
}

beforeAll(async () => {
  const pki = makePki();
  server = createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://x');
      const review = JSON.parse(body);
      received.push({ path: url.pathname, review });
      const reply = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            apiVersion: review.apiVersion,
            kind: 'AdmissionReview',
            response: { uid: review.request.uid, ...answer(url.pathname, review.request) },
          }),
        );
      if (url.pathname === '/slow') setTimeout(reply, 3_000);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  writeFileSync(join(project, 'skiff.config.mjs'), `export default { plugins: ['@skiff/plugin-admission-webhooks'] };\n`);
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });

  const caBundle = b64(pki.caPem);
  const url = (path: string) => `https://127.0.0.1:${port}${path}`;
  const configMapRule = (operations: string[]) => [{ operations, apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: 'Namespaced' }];
  const inNamespacesLabelled = (key: string, value: string) => ({ matchLabels: { [key]: value } });
  await apply(
    [
      ...['hooked', 'plain', 'slow-ignore', 'slow-fail', 'reinvoke', 'other-ca', 'via-endpoints'].map((name) => ({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: name === 'plain' ? {} : { 'webhook-test': name } },
      })),
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'webhook-system' } },
      // A Service with no selector, served by a hand-written EndpointSlice pointing at the test server.
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'hooks', namespace: 'webhook-system' },
        spec: { ports: [{ name: 'https', port: 443, targetPort: port }] },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'hooks-manual',
          namespace: 'webhook-system',
          labels: { 'kubernetes.io/service-name': 'hooks', 'endpointslice.kubernetes.io/managed-by': 'test' },
        },
        addressType: 'IPv4',
        ports: [{ name: 'https', port, protocol: 'TCP' }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
      // Another selector-less Service, served by a hand-written Endpoints object only.
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'legacy', namespace: 'webhook-system' }, spec: { ports: [{ port: 8443, targetPort: port }] } },
      {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'legacy', namespace: 'webhook-system' },
        subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port, protocol: 'TCP' }] }],
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'add-label' },
        webhooks: [
          {
            name: 'add-label.example.com',
            clientConfig: { url: url('/add-label'), caBundle },
            rules: configMapRule(['CREATE']),
            namespaceSelector: inNamespacesLabelled('webhook-test', 'hooked'),
            objectSelector: { matchExpressions: [{ key: 'skip-webhooks', operator: 'DoesNotExist' }] },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 5,
          },
        ],
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'reinvoke-a-first' },
        webhooks: [
          {
            name: 'count.example.com',
            clientConfig: { url: url('/count'), caBundle },
            rules: configMapRule(['CREATE']),
            namespaceSelector: inNamespacesLabelled('webhook-test', 'reinvoke'),
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            reinvocationPolicy: 'IfNeeded',
          },
        ],
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'reinvoke-b-second' },
        webhooks: [
          {
            name: 'mark.example.com',
            clientConfig: { url: url('/mark'), caBundle },
            rules: configMapRule(['CREATE']),
            namespaceSelector: inNamespacesLabelled('webhook-test', 'reinvoke'),
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'policies' },
        webhooks: [
          {
            name: 'deny.example.com',
            clientConfig: { service: { namespace: 'webhook-system', name: 'hooks', path: '/deny', port: 443 }, caBundle },
            rules: configMapRule(['CREATE', 'UPDATE']),
            namespaceSelector: inNamespacesLabelled('webhook-test', 'hooked'),
            matchConditions: [
              { name: 'not-exempt', expression: "!has(object.metadata.annotations) || !('webhooks.example.com/exempt' in object.metadata.annotations)" },
            ],
            sideEffects: 'NoneOnDryRun',
            admissionReviewVersions: ['v1', 'v1beta1'],
          },
          ...(['Ignore', 'Fail'] as const).map((failurePolicy) => ({
            name: `slow-${failurePolicy.toLowerCase()}.example.com`,
            clientConfig: { url: url('/slow'), caBundle },
            rules: configMapRule(['CREATE']),
            namespaceSelector: inNamespacesLabelled('webhook-test', `slow-${failurePolicy.toLowerCase()}`),
            failurePolicy,
            timeoutSeconds: 1,
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          })),
          {
            name: 'via-endpoints.example.com',
            clientConfig: { service: { namespace: 'webhook-system', name: 'legacy', path: '/endpoints', port: 8443 }, caBundle },
            rules: configMapRule(['CREATE']),
            namespaceSelector: inNamespacesLabelled('webhook-test', 'via-endpoints'),
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
          {
            name: 'other-ca.example.com',
            clientConfig: { url: url('/allow'), caBundle: b64(otherCaPem()) },
            rules: configMapRule(['CREATE']),
            namespaceSelector: inNamespacesLabelled('webhook-test', 'other-ca'),
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n---\n'),
  );
}, 120_000);
afterAll(async () => {
  await skiff?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('a mutating webhook', () => {
  it('adds its label to a new ConfigMap, and its warning reaches kubectl', async () => {
    const created = await kubectl(['create', 'configmap', 'labelled', '-n', 'hooked', '--from-literal=a=b']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain('Warning: add-label saw configmap labelled');
    const stored = await json('get', 'configmap', 'labelled', '-n', 'hooked');
    expect(stored.metadata.labels).toEqual({ 'webhook.example.com/seen': 'yes' });
  });

  it('receives an AdmissionReview v1 describing the request', async () => {
    const review = reviewsAt('/add-label').find((r) => r.request.name === 'labelled');
    expect(review).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        kind: { group: '', version: 'v1', kind: 'ConfigMap' },
        resource: { group: '', version: 'v1', resource: 'configmaps' },
        requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
        requestResource: { group: '', version: 'v1', resource: 'configmaps' },
        name: 'labelled',
        namespace: 'hooked',
        operation: 'CREATE',
        object: { kind: 'ConfigMap', metadata: { name: 'labelled', namespace: 'hooked' }, data: { a: 'b' } },
        oldObject: null,
        dryRun: false,
        options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
      },
    });
    expect(review.request.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(review.request.userInfo.groups).toContain('system:masters');
  });

  it('is not called for a namespace its namespaceSelector leaves out', async () => {
    await ok('create', 'configmap', 'unlabelled', '-n', 'plain');
    expect((await json('get', 'configmap', 'unlabelled', '-n', 'plain')).metadata.labels).toBeUndefined();
    expect(reviewsAt('/add-label').some((r) => r.request.name === 'unlabelled')).toBe(false);
  });

  it('is not called for an object its objectSelector leaves out', async () => {
    await apply(
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'opted-out', namespace: 'hooked', labels: { 'skip-webhooks': 'yes' } } }),
    );
    expect((await json('get', 'configmap', 'opted-out', '-n', 'hooked')).metadata.labels).toEqual({ 'skip-webhooks': 'yes' });
    expect(reviewsAt('/add-label').some((r) => r.request.name === 'opted-out')).toBe(false);
  });

  it('with reinvocationPolicy IfNeeded is called again after a later webhook changed the object', async () => {
    await ok('create', 'configmap', 'twice', '-n', 'reinvoke');
    const calls = reviewsAt('/count').filter((r) => r.request.name === 'twice');
    expect(calls).toHaveLength(2);
    expect(calls[1].request.object.metadata.labels).toMatchObject({ 'second-webhook': 'was-here', 'first-webhook-calls': '1' });
    expect((await json('get', 'configmap', 'twice', '-n', 'reinvoke')).metadata.labels).toEqual({ 'first-webhook-calls': '2', 'second-webhook': 'was-here' });
  });
});

describe('a validating webhook behind a Service', () => {
  it('refuses with its message, which kubectl prints', async () => {
    const refused = await kubectl(['create', 'configmap', 'bad', '-n', 'hooked', '--from-literal=forbidden=1']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('admission webhook "deny.example.com" denied the request: the key "forbidden" is not allowed in this namespace');
    expect((await kubectl(['get', 'configmap', 'bad', '-n', 'hooked'])).stderr).toContain('not found');
  });

  it('sees the mutated object, and lets an acceptable one in', async () => {
    await ok('create', 'configmap', 'good', '-n', 'hooked', '--from-literal=fine=1');
    const review = reviewsAt('/deny').find((r) => r.request.name === 'good');
    expect(review.request.object.metadata.labels).toEqual({ 'webhook.example.com/seen': 'yes' });
  });

  it('checks updates too: the old object comes along', async () => {
    const refused = await kubectl(['patch', 'configmap', 'good', '-n', 'hooked', '-p', '{"data":{"forbidden":"now"}}']);
    expect(refused.stderr).toContain('admission webhook "deny.example.com" denied the request');
    const review = reviewsAt('/deny').find((r) => r.request.name === 'good' && r.request.operation === 'UPDATE');
    expect(review.request.oldObject.data).toEqual({ fine: '1' });
    expect(review.request.options.kind).toBe('UpdateOptions');
  });
});

describe('a Service reference', () => {
  it('reaches a selector-less Service through its Endpoints when it has no EndpointSlice of its own', async () => {
    await ok('create', 'configmap', 'through-endpoints', '-n', 'via-endpoints');
    expect(reviewsAt('/endpoints').map((r) => r.request.name)).toContain('through-endpoints');
  });
});

describe('matchConditions', () => {
  it('a false condition leaves the request out: the webhook is not called', async () => {
    const exempt = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'exempt', namespace: 'hooked', annotations: { 'webhooks.example.com/exempt': 'yes' } },
      data: { forbidden: '1' },
    };
    await apply(JSON.stringify(exempt));
    expect(reviewsAt('/deny').some((r) => r.request.name === 'exempt')).toBe(false);
  });

  it('a condition that does not compile is refused when the configuration is written', async () => {
    const broken = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'broken-condition' },
      webhooks: [
        {
          name: 'broken.example.com',
          clientConfig: { url: `https://127.0.0.1:${port}/allow` },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          matchConditions: [{ name: 'bad', expression: 'object.metadata.name ==' }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    };
    const refused = await kubectl(['apply', '-f', '-'], JSON.stringify(broken));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'The ValidatingWebhookConfiguration "broken-condition" is invalid: webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name ==": compilation failed',
    );
  });
});

describe('a slow webhook (timeoutSeconds: 1)', () => {
  it('with failurePolicy Ignore lets the create through after about a second', async () => {
    const started = Date.now();
    await ok('create', 'configmap', 'patient', '-n', 'slow-ignore');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeLessThan(3_000);
    expect(await json('get', 'configmap', 'patient', '-n', 'slow-ignore')).toMatchObject({ metadata: { name: 'patient' } });
  });

  it('with failurePolicy Fail refuses with the timeout, as kube-apiserver words it', async () => {
    const started = Date.now();
    const refused = await kubectl(['create', 'configmap', 'impatient', '-n', 'slow-fail']);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `Internal error occurred: failed calling webhook "slow-fail.example.com": failed to call webhook: Post "https://127.0.0.1:${port}/slow?timeout=1s": context deadline exceeded`,
    );
  });
});

describe('certificates', () => {
  it('a caBundle of another CA does not verify the server: the call fails', async () => {
    const refused = await kubectl(['create', 'configmap', 'unverified', '-n', 'other-ca']);
    expect(refused.stderr).toContain('failed calling webhook "other-ca.example.com"');
    expect(refused.stderr).toContain('x509: certificate signed by unknown authority');
  });
});

describe('dry run', () => {
  it('calls webhooks without side effects, with dryRun set, and stores nothing', async () => {
    const preview = await json('create', 'configmap', 'preview', '-n', 'hooked', '--dry-run=server');
    expect(preview.metadata.labels).toEqual({ 'webhook.example.com/seen': 'yes' });
    expect(reviewsAt('/add-label').find((r) => r.request.name === 'preview').request.dryRun).toBe(true);
    expect((await kubectl(['get', 'configmap', 'preview', '-n', 'hooked'])).stderr).toContain('not found');
  });

  it('is refused by a validating webhook as a real request would be (sideEffects: NoneOnDryRun)', async () => {
    const refused = await kubectl(['create', 'configmap', 'bad-preview', '-n', 'hooked', '--from-literal=forbidden=1', '--dry-run=server']);
    expect(refused.stderr).toContain('admission webhook "deny.example.com" denied the request');
    expect(reviewsAt('/deny').find((r) => r.request.name === 'bad-preview').request.dryRun).toBe(true);
  });
});

describe('configuration changes', () => {
  it('a new configuration takes effect at once, and a deleted one stops', async () => {
    const config = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'late' },
      webhooks: [
        {
          name: 'late.example.com',
          clientConfig: { url: `https://127.0.0.1:${port}/deny`, caBundle: b64(makePki().caPem) },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          objectSelector: { matchLabels: { late: 'yes' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    };
    await apply(JSON.stringify(config));
    // Its caBundle is a fresh CA: every call fails, so the refusal shows the configuration is in force.
    const labelled = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'plain', labels: { late: 'yes' } } });
    // In force within a second (a watch event, in practice milliseconds: the first try is refused).
    const applied = Date.now();
    const refused = await waitFor(
      'the new configuration to refuse a create',
      async () => {
        const result = await kubectl(['create', '-f', '-'], labelled('after-apply'));
        if (!result.stderr.includes('failed calling webhook "late.example.com"')) throw new Error(result.stderr || result.stdout);
        return result;
      },
      { timeoutMs: 1_000, intervalMs: 50 },
    );
    expect(refused.code).not.toBe(0);
    expect(Date.now() - applied).toBeLessThan(1_500);
    await ok('delete', 'validatingwebhookconfiguration', 'late');
    await waitFor('the deleted configuration to stop refusing', () => apply(labelled('after-delete')), { timeoutMs: 1_000, intervalMs: 50 });
  });
});
