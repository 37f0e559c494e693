import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors } from '@skiff/api';
import { CHAIN_STAGE, definePlugin, PluginFailure, type AuditEvent, type Logger } from '@skiff/kernel';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';
import { errorResponse, withPluginFailures } from './error-response.js';

const audit: AuditEvent[] = [];

/** A third-party plugin with bugs that show only when a request asks for them (the x-break header, a label). */
const buggy = definePlugin({
  name: 'skiff-plugin-buggy',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.validate.tapPromise('deny-latest', async (request) => {
      if (request.object?.metadata.labels?.bug !== 'admission') return;
      // The bug: a Pod has no spec.template.
      const template = (request.object as unknown as { spec: { template?: { spec: unknown } } }).spec.template!;
      if (template.spec) return;
    });
    kernel.hooks.authenticate.tap({ name: 'broken-oidc', stage: CHAIN_STAGE.CERTIFICATE }, (request) => {
      if (request.headers['x-break'] === 'authn') throw new Error('issuer https://idp.invalid unreachable');
      return undefined;
    });
    kernel.hooks.authorize.tapPromise({ name: 'broken-webhook', stage: -10 }, async (attributes) => {
      if (attributes.path.includes('/namespaces/authz-bug/')) throw new Error('webhook returned 502');
      return undefined;
    });
    kernel.hooks.audit.tap('test-audit', (event) => void audit.push(event));
  },
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ plugins: [buggy] });
});
afterAll(async () => {
  await server?.stop();
});

describe('a plugin that fails', () => {
  it('in admission: 500 naming the admission plugin, audited as Panic', async () => {
    audit.length = 0;
    const crashed = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('latest', { metadata: { labels: { bug: 'admission' } } }) });
    expect(crashed.status).toBe(500);
    expect(crashed.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Internal error occurred: admission plugin "deny-latest" failed: Cannot read properties of undefined (reading 'spec')`,
      reason: 'InternalError',
      code: 500,
    });
    expect(audit.map((event) => event.stage)).toEqual(['RequestReceived', 'Panic']);
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/latest')).status).toBe(404);
    // Requests the bug does not touch go through.
    expect((await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('fine') })).status).toBe(201);
  });

  it('in authentication: the next authenticator still gets its turn; nobody recognising the request is a 401 naming it', async () => {
    const recognised = await server.request('GET', '/api/v1/namespaces/default/pods', { headers: { 'x-break': 'authn' } });
    expect(recognised.status).toBe(200);
    const rejected = await server.request('GET', '/api/v1/namespaces/default/pods', { token: 'nope', headers: { 'x-break': 'authn' } });
    expect(rejected.status).toBe(401);
    expect(rejected.json).toMatchObject({
      reason: 'Unauthorized',
      message: 'Unauthorized: authenticator "broken-oidc" failed: issuer https://idp.invalid unreachable; invalid bearer token',
      details: {
        causes: [
          { reason: 'Unauthorized', message: 'authenticator "broken-oidc" failed: issuer https://idp.invalid unreachable' },
          { reason: 'Unauthorized', message: 'invalid bearer token' },
        ],
      },
    });
  });

  it('in authorization: a later decision still counts; nobody deciding is a 500 naming the authorizer', async () => {
    expect((await server.request('GET', '/api/v1/namespaces/authz-bug/pods', { token: 'alice-token' })).status).toBe(200);
    const failed = await server.request('POST', '/api/v1/namespaces/authz-bug/pods', { token: 'alice-token', body: pod('x') });
    expect(failed.status).toBe(500);
    expect(failed.json).toMatchObject({
      reason: 'InternalError',
      message: 'Internal error occurred: authorizer "broken-webhook" failed: webhook returned 502',
    });
    // Without the failure the same request is an ordinary 403.
    const forbidden = await server.request('POST', '/api/v1/namespaces/default/pods', { token: 'alice-token', body: pod('x') });
    expect(forbidden.status).toBe(403);
  });
});

describe('errorResponse', () => {
  const logged: { obj: Record<string, unknown>; msg?: string }[] = [];
  const logger = { error: (obj: object, msg?: string) => void logged.push({ obj: obj as Record<string, unknown>, msg }) } as Logger;
  const context = { method: 'POST', path: '/api/v1/namespaces/default/pods' };

  it('logs the failure a Status was made from with its stack, naming the plugin, tap and hook', () => {
    logged.length = 0;
    const bug = new TypeError("Cannot read properties of undefined (reading 'spec')");
    const failure = new PluginFailure('skiff-plugin-deny-latest', 'deny-latest', 'validate', bug);
    const { response, unexpected } = errorResponse(
      withPluginFailures(errors.internal(`admission plugin "deny-latest" failed: ${failure.detail}`), [failure]),
      logger,
      context,
    );
    expect(response.status).toBe(500);
    expect(unexpected).toBe(true);
    expect(logged).toEqual([
      {
        obj: { err: bug, plugin: 'skiff-plugin-deny-latest', tap: 'deny-latest', hook: 'validate', ...context },
        msg: `plugin "skiff-plugin-deny-latest" failed in validate (tap "deny-latest"): Cannot read properties of undefined (reading 'spec')`,
      },
    ]);
    expect((logged[0]!.obj.err as Error).stack).toContain('TypeError');
  });

  it('answers a bare plugin failure with a 500 carrying its message, logged the same way', () => {
    logged.length = 0;
    const failure = new PluginFailure('skiff-plugin-audit', 'skiff-plugin-audit', 'audit', new Error('disk full'));
    const { response } = errorResponse(failure, logger, context);
    expect(response.status).toBe(500);
    expect((response.body as { message: string }).message).toBe('Internal error occurred: plugin "skiff-plugin-audit" failed in audit: disk full');
    expect(logged[0]!.obj).toMatchObject({ plugin: 'skiff-plugin-audit', tap: 'skiff-plugin-audit', hook: 'audit' });
  });
});
