import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors } from '@skiff/api';
import { AdmissionError, definePlugin, LIFECYCLE_STAGE, type AuthzAttributes, type ResourceDefinition } from '@skiff/kernel';
import type { ExtensionRequest } from './extensions.js';
import { startTestServer, type TestServer } from './test-support/cluster.js';

const seen: ExtensionRequest[] = [];
const asked: AuthzAttributes[] = [];

const GADGETS: ResourceDefinition = {
  group: 'example.com',
  version: 'v1',
  kind: 'Gadget',
  resource: 'gadgets',
  singular: 'gadget',
  namespaced: true,
  subresources: ['echo'],
};

/** A plugin answering gadgets/echo and GET /example/info, the way a third-party plugin would. */
const extending = definePlugin({
  name: 'test-extending',
  version: '0.1.0',
  kernel: '^0.1.0',
  needs: ['apiExtensions'],
  apply(kernel) {
    kernel.hooks.resources.tap('test-extending', (registry) => registry.register(GADGETS));
    // A create through the plugin's handler passes admission like any create.
    kernel.hooks.mutate.tap('test-extending', (request) => {
      if (request.subresource === 'echo' && request.object) (request.object as { admitted?: boolean }).admitted = true;
    });
    kernel.hooks.validate.tap('test-extending', (request) => {
      if (request.subresource === 'echo' && (request.object as { refuse?: boolean } | undefined)?.refuse)
        throw new AdmissionError('echoes that refuse are refused');
    });
    kernel.lifecycle('test-extending', LIFECYCLE_STAGE.API_SERVER - 1, {
      start() {
        const extensions = kernel.resolve('apiExtensions');
        extensions.handle({ group: 'example.com', resource: 'gadgets', subresource: 'echo', verb: 'create' }, async (request) => {
          seen.push(request);
          const stored = await extensions.get({ group: 'example.com', resource: 'gadgets' }, request.namespace, request.name);
          if (!stored) throw errors.notFound('gadgets', 'example.com', request.name);
          return { status: 201, body: { kind: 'Echo', uid: stored.metadata.uid, got: request.body } };
        });
        extensions.route({
          method: 'GET',
          path: '/example/info',
          handler: async () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: { ok: true } }),
        });
      },
    });
  },
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    plugins: [extending],
    policy: (attributes) => {
      asked.push(attributes);
      return { decision: 'allow' };
    },
  });
});
afterAll(async () => {
  await server?.stop();
});

describe('apiExtensions', () => {
  it('hands a declared subresource to the plugin after authentication and authorization, with stored objects readable', async () => {
    const created = await server.request('POST', '/apis/example.com/v1/namespaces/default/gadgets', {
      token: 'alice-token',
      body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'w1' } },
    });
    expect(created.status).toBe(201);
    const response = await server.request('POST', '/apis/example.com/v1/namespaces/default/gadgets/w1/echo?dryRun=All', {
      token: 'alice-token',
      body: { hello: 'there' },
    });
    expect(response.status).toBe(201);
    expect(response.json).toEqual({ kind: 'Echo', uid: created.json.metadata.uid, got: { hello: 'there', admitted: true } });
    expect(seen.at(-1)).toMatchObject({ namespace: 'default', name: 'w1', subresource: 'echo', verb: 'create', dryRun: true, user: { username: 'alice' } });
    expect(asked.at(-1)).toMatchObject({ resource: 'gadgets', subresource: 'echo', verb: 'create', name: 'w1' });
  });

  it('admits a create before the plugin sees it: a validating refusal answers instead', async () => {
    const before = seen.length;
    const response = await server.request('POST', '/apis/example.com/v1/namespaces/default/gadgets/w1/echo', { token: 'alice-token', body: { refuse: true } });
    expect(response.status).toBe(403);
    expect(response.json.message).toBe('echoes that refuse are refused');
    expect(seen.length).toBe(before);
  });

  it('sends what the plugin throws as a Status', async () => {
    const response = await server.request('POST', '/apis/example.com/v1/namespaces/default/gadgets/missing/echo', { token: 'alice-token', body: {} });
    expect(response.status).toBe(404);
    expect(response.json).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'gadgets.example.com "missing" not found' });
  });

  it('serves a plugin path outside /api and /apis through the same pipeline', async () => {
    const response = await server.request('GET', '/example/info', { token: 'alice-token' });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ ok: true });
    expect(asked.at(-1)).toMatchObject({ isResourceRequest: false, path: '/example/info', verb: 'get' });
    expect((await server.request('GET', '/example/info', { token: null })).status).toBe(401);
    expect((await server.request('GET', '/example/other', { token: 'alice-token' })).status).toBe(404);
  });
});
