import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZE_STAGE, Kernel, type AuthzAttributes } from '@skiff/kernel';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import { stringify } from 'yaml';
import { WebhookAuthorizer } from './authorizer.js';
import { WebhookClient } from './client.js';
import plugin from './index.js';
import { clientCertificate, newTls, startTestWebhook, type Answer, type TestWebhook } from './test-support.js';

const getPods: AuthzAttributes = {
  user: { username: 'x', uid: 'uid-x', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a', 'b'] } },
  verb: 'get',
  isResourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  name: 'web',
  path: '/api/v1/namespaces/default/pods/web',
};
const deletePods: AuthzAttributes = { ...getPods, verb: 'delete' };

/** x may get pods, never delete anything; anything else: no opinion. */
const policy: Answer = (review) => {
  const { user, resourceAttributes } = review.spec;
  if (user === 'x' && resourceAttributes?.verb === 'get' && resourceAttributes.resource === 'pods') return { allowed: true, reason: 'x reads pods' };
  if (user === 'x' && resourceAttributes?.verb === 'delete') return { allowed: false, denied: true, reason: 'x never deletes' };
  return { allowed: false };
};

let webhook: TestWebhook;
const dir = mkdtempSync(join(tmpdir(), 'skiff-authz-webhook-test-'));
const kernels: Kernel[] = [];

beforeAll(async () => {
  webhook = await startTestWebhook({ answer: policy });
});
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.stop();
  webhook.answer = policy;
  webhook.reviews.length = 0;
});
afterAll(async () => {
  await webhook?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function started(options: Record<string, unknown>, ...more: [typeof alwaysAllow][]): Promise<Kernel> {
  const kernel = new Kernel({ config: { logLevel: 'silent', rootDir: dir } }).use(plugin, options);
  for (const [p] of more) kernel.use(p);
  kernels.push(kernel);
  await kernel.start();
  return kernel;
}

const direct = () => ({ url: webhook.url, caBundle: webhook.tls.caPem });

describe('the review', () => {
  it('is an authorization.k8s.io/v1 SubjectAccessReview of the request and its user', async () => {
    const kernel = await started(direct());
    await kernel.hooks.authorize.promise(getPods);
    await kernel.hooks.authorize.promise({
      ...getPods,
      verb: 'get',
      isResourceRequest: false,
      apiVersion: '',
      resource: '',
      namespace: '',
      name: '',
      path: '/healthz',
      user: { username: 'y', groups: [] },
    });
    expect(webhook.reviews).toEqual([
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          resourceAttributes: { namespace: 'default', verb: 'get', version: 'v1', resource: 'pods', name: 'web' },
          user: 'x',
          groups: ['devs', 'system:authenticated'],
          extra: { scopes: ['a', 'b'] },
          uid: 'uid-x',
        },
      },
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' }, user: 'y' },
      },
    ]);
  });
});

describe('the answer', () => {
  it('allowed allows, denied denies, neither leaves the request to the next authorizer', async () => {
    const kernel = await started(direct(), [alwaysAllow]);
    expect(await kernel.hooks.authorize.promise(getPods)).toEqual({ decision: 'allow', reason: 'x reads pods' });
    expect(await kernel.hooks.authorize.promise(deletePods)).toEqual({ decision: 'deny', reason: 'x never deletes' });
    expect(await kernel.hooks.authorize.promise({ ...getPods, verb: 'list', name: '' })).toEqual({ decision: 'allow', reason: 'always-allow authorizer' });
  });

  it('is asked at the stage the options name', async () => {
    const kernel = await started({ ...direct(), stage: AUTHORIZE_STAGE.CATCH_ALL + 1 }, [alwaysAllow]);
    expect(await kernel.hooks.authorize.promise(deletePods)).toEqual({ decision: 'allow', reason: 'always-allow authorizer' });
    expect(webhook.reviews).toHaveLength(0);
  });
});

describe('the decision cache', () => {
  it('answers repeated questions without calling the webhook, concurrent ones included', async () => {
    const kernel = await started(direct());
    await Promise.all(Array.from({ length: 20 }, () => kernel.hooks.authorize.promise(getPods)));
    for (let i = 0; i < 20; i++) {
      expect(await kernel.hooks.authorize.promise(getPods)).toEqual({ decision: 'allow', reason: 'x reads pods' });
      expect(await kernel.hooks.authorize.promise(deletePods)).toEqual({ decision: 'deny', reason: 'x never deletes' });
    }
    expect(webhook.reviews).toHaveLength(2);
    // Any attribute that differs is another question.
    await kernel.hooks.authorize.promise({ ...getPods, namespace: 'other' });
    await kernel.hooks.authorize.promise({ ...getPods, user: { ...getPods.user, groups: ['devs'] } });
    expect(webhook.reviews).toHaveLength(4);
  });

  it('keeps an allow for authorizedTTL and a deny or no opinion for unauthorizedTTL', async () => {
    let now = 0;
    const client = new WebhookClient({ url: new URL(webhook.url), ca: webhook.tls.caPem }, 3_000);
    const authorizer = new WebhookAuthorizer((spec) => client.review(spec), {
      failurePolicy: 'NoOpinion',
      authorizedTTLMs: 300_000,
      unauthorizedTTLMs: 30_000,
      cacheSize: 100,
      now: () => now,
    });
    const noOpinion = { ...getPods, verb: 'watch' };
    const ask = () => Promise.all([getPods, deletePods, noOpinion].map((attributes) => authorizer.authorize(attributes)));
    expect(await ask()).toEqual([{ decision: 'allow', reason: 'x reads pods' }, { decision: 'deny', reason: 'x never deletes' }, undefined]);
    now = 29_999;
    await ask();
    expect(webhook.reviews).toHaveLength(3);
    now = 30_000;
    await ask();
    expect(webhook.reviews.map((review) => review.spec.resourceAttributes?.verb)).toEqual(['get', 'delete', 'watch', 'delete', 'watch']);
    now = 299_999;
    await authorizer.authorize(getPods);
    expect(webhook.reviews).toHaveLength(5);
    now = 300_000;
    await authorizer.authorize(getPods);
    expect(webhook.reviews).toHaveLength(6);
    client.close();
  });

  it('holds at most cacheSize decisions, dropping the least recently used', async () => {
    const kernel = await started({ ...direct(), cacheSize: 2 });
    const names = ['a', 'b', 'a', 'c', 'a', 'b'];
    for (const name of names) await kernel.hooks.authorize.promise({ ...getPods, name });
    expect(webhook.reviews.map((review) => review.spec.resourceAttributes?.name)).toEqual(['a', 'b', 'c', 'b']);
  });
});

describe('a failing webhook', () => {
  it('follows failurePolicy NoOpinion (the default) or Deny, and is asked again next time', async () => {
    webhook.answer = () => ({ httpStatus: 500, body: '{"message":"database down"}' });
    const lenient = await started(direct());
    expect(await lenient.hooks.authorize.promise(getPods)).toBeUndefined();
    const strict = await started({ ...direct(), failurePolicy: 'Deny', stage: AUTHORIZE_STAGE.DEFAULT }, [alwaysAllow]);
    expect(await strict.hooks.authorize.promise(getPods)).toEqual({ decision: 'deny', reason: 'the authorization webhook failed (failurePolicy Deny)' });
    webhook.answer = policy;
    expect(await strict.hooks.authorize.promise(getPods)).toEqual({ decision: 'allow', reason: 'x reads pods' });
  });

  it('times out after timeoutMs', async () => {
    webhook.answer = async (review) => {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      return policy(review, {});
    };
    const kernel = await started({ ...direct(), timeoutMs: 200, failurePolicy: 'Deny' });
    const started_ = performance.now();
    expect(await kernel.hooks.authorize.promise(getPods)).toEqual({ decision: 'deny', reason: 'the authorization webhook failed (failurePolicy Deny)' });
    expect(performance.now() - started_).toBeLessThan(1_000);
  });

  it('fails on answers that are not a SubjectAccessReview of v1', async () => {
    const client = new WebhookClient({ url: new URL(webhook.url), ca: webhook.tls.caPem }, 3_000);
    try {
      const spec = { user: 'x', resourceAttributes: { verb: 'get' } };
      webhook.answer = () => ({ httpStatus: 200, body: 'ok' });
      await expect(client.review(spec)).rejects.toThrow('the answer is not JSON');
      webhook.answer = () => ({
        httpStatus: 200,
        body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1beta1', kind: 'SubjectAccessReview', status: { allowed: true } }),
      });
      await expect(client.review(spec)).rejects.toThrow(
        'expected a SubjectAccessReview of authorization.k8s.io/v1, got "SubjectAccessReview" of "authorization.k8s.io/v1beta1"',
      );
      webhook.answer = () => ({ httpStatus: 403, body: 'go away' });
      await expect(client.review(spec)).rejects.toThrow('the webhook answered 403: go away');
    } finally {
      client.close();
    }
  });

  it('is one whose certificate the configured CA did not sign', async () => {
    const kernel = await started({ url: webhook.url, caBundle: newTls().caPem, failurePolicy: 'Deny' });
    expect(await kernel.hooks.authorize.promise(getPods)).toMatchObject({ decision: 'deny' });
    expect(webhook.reviews).toHaveLength(0);
  });
});

describe('client certificates and kubeconfig files', () => {
  let guarded: TestWebhook;
  const clientCa = newTls();
  const files = (name: string, pem: { certPem: string; keyPem: string }) => {
    writeFileSync(join(dir, `${name}.crt`), pem.certPem);
    writeFileSync(join(dir, `${name}.key`), pem.keyPem, { mode: 0o600 });
    return { clientCertFile: `${name}.crt`, clientKeyFile: `${name}.key` };
  };
  beforeAll(async () => {
    guarded = await startTestWebhook({
      clientCa: clientCa.caPem,
      answer: (review, client) => ({
        allowed: client.certificateSubject === 'kube-apiserver',
        reason: `${client.certificateSubject} ${client.authorization ?? ''}`.trim(),
      }),
    });
  });
  afterAll(() => guarded?.close());

  it('presents the configured client certificate', async () => {
    const kernel = await started({ url: guarded.url, caBundle: guarded.tls.caPem, ...files('apiserver', clientCertificate(clientCa, 'kube-apiserver')) });
    expect(await kernel.hooks.authorize.promise(getPods)).toEqual({ decision: 'allow', reason: 'kube-apiserver' });
    const anonymous = await started({ url: guarded.url, caBundle: guarded.tls.caPem, failurePolicy: 'Deny' });
    expect(await anonymous.hooks.authorize.promise(getPods)).toMatchObject({ decision: 'deny' });
  });

  it('reads the connection from a kubeconfig file: server, CA, client certificate and token', async () => {
    const client = clientCertificate(clientCa, 'kube-apiserver');
    writeFileSync(join(dir, 'ca.crt'), guarded.tls.caPem);
    writeFileSync(
      join(dir, 'webhook.kubeconfig'),
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'authz', cluster: { server: guarded.url, 'certificate-authority': 'ca.crt' } }],
        users: [
          {
            name: 'apiserver',
            user: {
              'client-certificate-data': Buffer.from(client.certPem).toString('base64'),
              'client-key-data': Buffer.from(client.keyPem).toString('base64'),
              token: 's3cret',
            },
          },
        ],
        contexts: [{ name: 'webhook', context: { cluster: 'authz', user: 'apiserver' } }],
        'current-context': 'webhook',
      }),
    );
    const kernel = await started({ kubeconfig: 'webhook.kubeconfig' });
    expect(await kernel.hooks.authorize.promise(getPods)).toEqual({ decision: 'allow', reason: 'kube-apiserver Bearer s3cret' });
  });
});

describe('options', () => {
  const use = (options: unknown) => () => new Kernel({ config: { logLevel: 'silent', rootDir: dir } }).use(plugin, options);
  const prefix = 'plugin "@skiff/plugin-authz-webhook": ';

  it('need an https url, or a kubeconfig but not both', () => {
    expect(use({})).toThrow(`${prefix}option "url" is required (or kubeconfig)`);
    expect(use({ url: 'http://127.0.0.1/authorize' })).toThrow(`${prefix}option "url" must be an https URL (got "http://127.0.0.1/authorize")`);
    expect(use({ kubeconfig: 'x', url: 'https://a' })).toThrow(`${prefix}option "kubeconfig" cannot be combined with url`);
    expect(use({ kubeconfig: 'missing.kubeconfig' })).toThrow(`${prefix}option "kubeconfig" cannot be read: ENOENT (${join(dir, 'missing.kubeconfig')})`);
  });

  it('name a kubeconfig that does not parse in one line, never quoting it (it holds tokens and keys)', () => {
    writeFileSync(join(dir, 'broken.kubeconfig'), 'users:\n- name: w\n  user:\n    token: s3cr3t-bearer-token: oops\n');
    let message = '';
    try {
      use({ kubeconfig: 'broken.kubeconfig' })();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/option "kubeconfig" .*broken\.kubeconfig: cannot be parsed: .*line 4/);
    expect(message).not.toContain('s3cr3t');
    expect(message).not.toContain('\n');
  });

  it('check certificates and keys', () => {
    expect(use({ url: 'https://a', caBundle: 'nope' })).toThrow(`${prefix}option "caBundle" must hold PEM certificates (-----BEGIN CERTIFICATE-----)`);
    expect(use({ url: 'https://a', clientCertFile: 'a.crt' })).toThrow(`${prefix}option "clientKeyFile" is required with the other`);
    expect(use({ url: 'https://a', failurePolicy: 'Allow' })).toThrow(`${prefix}option "failurePolicy" must be one of "NoOpinion", "Deny" (got "Allow")`);
    expect(use({ url: 'https://a', timeoutMs: 60_000 })).toThrow(`${prefix}option "timeoutMs" must be <= 30000 (got 60000)`);
  });
});
