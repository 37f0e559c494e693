import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kernel, type ApiRequest, type ApiResponse, type WatchEvent } from '@skiff/kernel';
import { openLmdbStore, type Store } from '@skiff/store';
import { ApiServer } from '../server.js';
import { pod, startTestServer, USERS, type TestServer } from '../test-support/cluster.js';
import { TEST_DEFINITIONS } from '../test-support/definitions.js';

const PODS = '/api/v1/namespaces/default/pods';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
  },
});

const names = (json: any) => json.items.map((item: any) => item.metadata.name).sort();

describe('over HTTPS', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    for (const name of ['r1', 'r2', 'r3']) await server.request('POST', PODS, { body: pod(name) });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const expectBadRequest = (response: { status: number; json: any }, message: string) => {
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message });
  };
  const expectInvalidOptions = (response: { status: number; json: any }, message: string) => {
    expect(response.status).toBe(422);
    expect(response.json).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message: `ListOptions.meta.k8s.io "" is invalid: ${message}`,
      details: { kind: 'ListOptions', group: 'meta.k8s.io' },
    });
  };

  describe('an unparsable resourceVersion is a 400 naming the field and the value', () => {
    const NOT_A_VERSION = 'must be an unsigned decimal integer, as returned by this server';

    it('on get, list and watch', async () => {
      expectBadRequest(await server.request('GET', `${PODS}?resourceVersion=abc`), `resourceVersion: Invalid value: "abc": ${NOT_A_VERSION}`);
      expectBadRequest(await server.request('GET', `${PODS}/r1?resourceVersion=abc`), `resourceVersion: Invalid value: "abc": ${NOT_A_VERSION}`);
      expectBadRequest(await server.request('GET', `${PODS}?watch=true&resourceVersion=abc`), `resourceVersion: Invalid value: "abc": ${NOT_A_VERSION}`);
      for (const value of ['-1', '1.5', '+3', '0x10', ' 5'])
        expect((await server.request('GET', `${PODS}?resourceVersion=${encodeURIComponent(value)}`)).status, value).toBe(400);
      expectBadRequest(
        await server.request('GET', `${PODS}?resourceVersion=18446744073709551616`),
        'resourceVersion: Invalid value: "18446744073709551616": must be at most 18446744073709551615',
      );
      const response = await server.request('GET', `${PODS}?resourceVersion=abc`);
      expect(response.json.details.causes).toEqual([
        { reason: 'FieldValueInvalid', field: 'resourceVersion', message: `Invalid value: "abc": ${NOT_A_VERSION}` },
      ]);
    });

    it('in update and patch bodies, instead of a 409', async () => {
      const current = (await server.request('GET', `${PODS}/r1`)).json;
      const message = `metadata.resourceVersion: Invalid value: "abc": ${NOT_A_VERSION}`;
      expectBadRequest(await server.request('PUT', `${PODS}/r1`, { body: { ...current, metadata: { ...current.metadata, resourceVersion: 'abc' } } }), message);
      expectBadRequest(
        await server.request('PUT', `${PODS}/r1/status`, { body: { ...current, metadata: { ...current.metadata, resourceVersion: 'abc' } } }),
        message,
      );
      expectBadRequest(
        await server.request('PATCH', `${PODS}/r1`, {
          body: { metadata: { resourceVersion: 'abc', labels: { x: 'y' } } },
          contentType: 'application/merge-patch+json',
        }),
        message,
      );
      expectBadRequest(
        await server.request('PATCH', `${PODS}/r1`, {
          body: [{ op: 'replace', path: '/metadata/resourceVersion', value: '-2' }],
          contentType: 'application/json-patch+json',
        }),
        `metadata.resourceVersion: Invalid value: "-2": ${NOT_A_VERSION}`,
      );
      await server.request('POST', DEPLOYMENTS, { body: deployment('scaled') });
      expectBadRequest(
        await server.request('PUT', `${DEPLOYMENTS}/scaled/scale`, {
          body: { kind: 'Scale', metadata: { name: 'scaled', resourceVersion: 'abc' }, spec: { replicas: 2 } },
        }),
        message,
      );
      expect((await server.request('GET', `${PODS}/r1`)).json.metadata.resourceVersion).toBe(current.metadata.resourceVersion);
    });

    it('in DeleteOptions preconditions', async () => {
      const response = await server.request('DELETE', `${PODS}/r3`, { body: { preconditions: { resourceVersion: 'abc' } } });
      expectBadRequest(response, `preconditions.resourceVersion: Invalid value: "abc": ${NOT_A_VERSION}`);
      expect((await server.request('GET', `${PODS}/r3`)).status).toBe(200);
    });
  });

  describe('resourceVersion and resourceVersionMatch combinations are checked as Kubernetes does (422)', () => {
    it('for lists', async () => {
      expectInvalidOptions(
        await server.request('GET', `${PODS}?resourceVersionMatch=NotOlderThan`),
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      );
      expectInvalidOptions(
        await server.request('GET', `${PODS}?resourceVersionMatch=Exact`),
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      );
      expectInvalidOptions(
        await server.request('GET', `${PODS}?resourceVersionMatch=Exact&resourceVersion=0`),
        'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      );
      expectInvalidOptions(
        await server.request('GET', `${PODS}?resourceVersionMatch=Newest&resourceVersion=1`),
        'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
      );
      expectInvalidOptions(
        await server.request('GET', `${PODS}?resourceVersionMatch=NotOlderThan&resourceVersion=1&continue=abc`),
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
      );
      expectInvalidOptions(
        await server.request('GET', `${PODS}?sendInitialEvents=true`),
        'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
      );
    });

    it('for watches: resourceVersionMatch only with sendInitialEvents, and then only NotOlderThan', async () => {
      expectInvalidOptions(
        await server.request('GET', `${PODS}?watch=true&resourceVersionMatch=NotOlderThan`),
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      );
      expectInvalidOptions(
        await server.request('GET', `${PODS}?watch=true&sendInitialEvents=true`),
        'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      );
      expectInvalidOptions(
        await server.request('GET', `${PODS}?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1`),
        'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"',
      );
      expectInvalidOptions(
        await server.request('GET', `${PODS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=abc`),
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
      );
      expectBadRequest(
        await server.request('GET', `${PODS}?watch=true&sendInitialEvents=maybe&resourceVersionMatch=NotOlderThan`),
        'invalid value for query parameter sendInitialEvents: "maybe" (expected true or false)',
      );
    });

    it('serves a watch-list: the state not older than resourceVersion, then the initial-events-end bookmark', async () => {
      const revision = server.store.revision();
      const watch = server.watch(
        `${PODS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${revision}`,
      );
      expect((await watch.response).statusCode).toBe(200);
      const bookmark = await watch.next((event) => event.type === 'BOOKMARK');
      expect(bookmark.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
      expect(Number(bookmark.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(revision);
      expect(watch.events.filter((event) => event.type === 'ADDED').map((event) => event.object.metadata.name)).toEqual(
        expect.arrayContaining(['r1', 'r2', 'r3']),
      );
      watch.close();
    });

    it('refuses a resourceVersion next to a continue token (400), except "0"', async () => {
      const first = await server.request('GET', `${PODS}?limit=1`);
      const token = encodeURIComponent(first.json.metadata.continue);
      expectBadRequest(
        await server.request('GET', `${PODS}?limit=1&continue=${token}&resourceVersion=${first.json.metadata.resourceVersion}`),
        'specifying resource version is not allowed when using continue',
      );
      expect((await server.request('GET', `${PODS}?limit=1&continue=${token}&resourceVersion=0`)).status).toBe(200);
    });
  });

  describe('lists', () => {
    it('serve "0" and revisions not newer than the store with the latest state (NotOlderThan)', async () => {
      const revision = server.store.revision();
      for (const query of [
        'resourceVersion=0',
        'resourceVersion=1',
        `resourceVersion=${revision}`,
        'resourceVersion=1&resourceVersionMatch=NotOlderThan',
        'resourceVersion=0&resourceVersionMatch=NotOlderThan',
      ]) {
        const response = await server.request('GET', `${PODS}?${query}`);
        expect(response.status, query).toBe(200);
        expect(response.json.metadata.resourceVersion, query).toBe(String(server.store.revision()));
      }
    });

    it('serve Exact at the current revision, with a limit too (the legacy Exact), and page from there', async () => {
      const revision = server.store.revision();
      const exact = await server.request('GET', `${PODS}?resourceVersion=${revision}&resourceVersionMatch=Exact`);
      expect(exact.status).toBe(200);
      expect(exact.json.metadata.resourceVersion).toBe(String(revision));
      expect(names(exact.json)).toEqual(expect.arrayContaining(['r1', 'r2', 'r3']));
      const page = await server.request('GET', `${PODS}?resourceVersion=${revision}&limit=1`);
      expect(page.status).toBe(200);
      expect(page.json.metadata.resourceVersion).toBe(String(revision));
      const next = await server.request('GET', `${PODS}?limit=100&continue=${encodeURIComponent(page.json.metadata.continue)}`);
      expect(next.json.metadata.resourceVersion).toBe(String(revision));
    });

    it('serve an Exact list of an older, retained revision as it was then', async () => {
      const older = server.store.revision();
      const before = (await server.request('GET', PODS)).json;
      await server.request('POST', PODS, { body: pod('newer') });
      for (const query of [`resourceVersion=${older}&resourceVersionMatch=Exact`, `resourceVersion=${older}&limit=500`]) {
        const response = await server.request('GET', `${PODS}?${query}`);
        expect(response.status, query).toBe(200);
        expect(response.json.metadata.resourceVersion, query).toBe(String(older));
        expect(names(response.json), query).toEqual(names(before));
        expect(names(response.json), query).not.toContain('newer');
      }
    });
  });

  describe('writes', () => {
    it('keep a stale resourceVersion a 409 Conflict; "0" is an unconditional update, as in Kubernetes', async () => {
      const current = (await server.request('GET', `${PODS}/r2`)).json;
      await server.request('PATCH', `${PODS}/r2`, { body: { metadata: { labels: { step: '1' } } }, contentType: 'application/merge-patch+json' });
      const stale = await server.request('PUT', `${PODS}/r2`, { body: { ...current, metadata: { ...current.metadata, labels: { step: '2' } } } });
      expect(stale.status).toBe(409);
      expect(stale.json.reason).toBe('Conflict');
      const unconditional = await server.request('PUT', `${PODS}/r2`, {
        body: { ...current, metadata: { ...current.metadata, resourceVersion: '0', labels: { step: '2' } } },
      });
      expect(unconditional.status).toBe(200);
      expect(unconditional.json.metadata.labels).toEqual({ step: '2' });
      const pinned = await server.request('PATCH', `${PODS}/r2`, {
        body: { metadata: { resourceVersion: current.metadata.resourceVersion } },
        contentType: 'application/merge-patch+json',
      });
      expect(pinned.status).toBe(409);
    });

    it('check delete preconditions on the resourceVersion: stale 409, current deletes', async () => {
      const current = (await server.request('GET', `${PODS}/r3`)).json;
      const stale = await server.request('DELETE', `${PODS}/r3`, {
        body: { preconditions: { resourceVersion: String(Number(current.metadata.resourceVersion) - 1) } },
      });
      expect(stale.status).toBe(409);
      expect(stale.json.message).toContain('Precondition failed: ResourceVersion in precondition');
      const deleted = await server.request('DELETE', `${PODS}/r3`, { body: { preconditions: { resourceVersion: current.metadata.resourceVersion } } });
      expect(deleted.status).toBe(200);
    });
  });

  describe('compacted revisions', () => {
    it('answer 410 Expired: an Exact list, a continue token, and a watch (as an ERROR event)', async () => {
      const page = await server.request('GET', `${PODS}?limit=1`);
      const before = server.store.revision();
      await server.request('POST', CONFIGMAPS, { body: { metadata: { name: 'compact-1' } } });
      await server.request('POST', CONFIGMAPS, { body: { metadata: { name: 'compact-2' } } });
      await server.store.compact(server.store.revision() - 1);
      const compacted = server.store.compactedRevision();

      const exact = await server.request('GET', `${PODS}?resourceVersion=${before}&resourceVersionMatch=Exact`);
      expect(exact.status).toBe(410);
      expect(exact.json).toMatchObject({
        reason: 'Expired',
        message: `The resourceVersion for the provided list is too old: revision ${before} has been compacted (oldest: ${compacted}).`,
      });

      const continued = await server.request('GET', `${PODS}?limit=1&continue=${encodeURIComponent(page.json.metadata.continue)}`);
      expect(continued.status).toBe(410);
      expect(continued.json.reason).toBe('Expired');
      expect(continued.json.message).toContain('The provided continue parameter is too old');

      const watch = server.watch(`${PODS}?watch=true&resourceVersion=${before}`);
      expect((await watch.response).statusCode).toBe(200);
      const error = await watch.next((event) => event.type === 'ERROR');
      expect(error.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
      watch.close();
    });
  });
});

/**
 * The API server in process with a real LMDB store and a short wait for future revisions: requests go
 * straight to `handle`, so a test can also abort one the way a client going away does.
 */
describe('a resourceVersion newer than the store', () => {
  const WAIT_MS = 300;
  let dataDir: string;
  let store: Store;
  let kernel: Kernel;
  let api: ApiServer;
  let token: string;

  function startApi(resourceVersionWaitMs: number): { api: ApiServer; token: string } {
    const server = new ApiServer({ hooks: kernel.hooks, logger: kernel.logger, resourceVersionWaitMs });
    for (const definition of TEST_DEFINITIONS) server.registry.register(definition);
    server.start(store);
    return { api: server, token: server.issueLoopbackToken(USERS['admin-token']!) };
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'skiff-resource-version-'));
    store = await openLmdbStore({ path: join(dataDir, 'store'), compactionIntervalMs: 0 });
    kernel = new Kernel({ config: { dataDir, logLevel: 'silent' } });
    kernel.hooks.authorize.tap('test-authz', () => ({ decision: 'allow' }));
    ({ api, token } = startApi(WAIT_MS));
    await call('POST', PODS, { body: pod('first') });
  });
  afterAll(async () => {
    api?.stop();
    await store?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function call(
    method: ApiRequest['method'],
    path: string,
    options: { query?: Record<string, string>; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<ApiResponse> {
    return api.handle({
      method,
      path,
      query: options.query ?? {},
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(options.body ? { 'content-type': 'application/json' } : {}) },
      body: options.body,
      signal: options.signal,
    });
  }

  const createLater = (name: string, ms: number) =>
    new Promise<void>((resolve) => setTimeout(() => void call('POST', PODS, { body: pod(name) }).then(() => resolve()), ms));

  const expectTooLarge = (response: ApiResponse, requested: number) => {
    expect(response.status).toBe(504);
    expect(response.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Timeout: Too large resource version: ${requested}, current: ${store.revision()}`,
      reason: 'Timeout',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      code: 504,
    });
  };

  it('waits for it, then answers 504 Timeout with a retry after 1 second (list, get, watch)', async () => {
    const future = store.revision() + 1;
    const requests = [
      () => call('GET', PODS, { query: { resourceVersion: String(future) } }),
      () => call('GET', PODS, { query: { resourceVersion: String(future), resourceVersionMatch: 'Exact' } }),
      () => call('GET', `${PODS}/first`, { query: { resourceVersion: String(future) } }),
      () => call('GET', PODS, { query: { watch: 'true', resourceVersion: String(future) } }),
    ];
    for (const request of requests) {
      const started = Date.now();
      const response = await request();
      expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS - 5);
      expectTooLarge(response, future);
    }
  });

  it('answers a list normally once a write brings the store there during the wait', async () => {
    const future = store.revision() + 1;
    const [response] = await Promise.all([call('GET', PODS, { query: { resourceVersion: String(future) } }), createLater('during-list', 50)]);
    expect(response.status).toBe(200);
    const list = response.body as { metadata: { resourceVersion: string }; items: { metadata: { name: string } }[] };
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThanOrEqual(future);
    expect(list.items.map((item) => item.metadata.name)).toContain('during-list');
  });

  it('answers an Exact list and a get normally when the store reaches the revision', async () => {
    const future = store.revision() + 1;
    const [exact] = await Promise.all([
      call('GET', PODS, { query: { resourceVersion: String(future), resourceVersionMatch: 'Exact' } }),
      createLater('during-exact', 50),
    ]);
    expect(exact.status).toBe(200);
    expect((exact.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe(String(future));
    const next = store.revision() + 1;
    const [get] = await Promise.all([call('GET', `${PODS}/during-exact`, { query: { resourceVersion: String(next) } }), createLater('during-get', 50)]);
    expect(get.status).toBe(200);
    expect((get.body as { metadata: { name: string } }).metadata.name).toBe('during-exact');
  });

  it('starts a watch after the revision once the store reaches it', async () => {
    const future = store.revision() + 1;
    const controller = new AbortController();
    const watching = call('GET', PODS, { query: { watch: 'true', resourceVersion: String(future) }, signal: controller.signal }).then((response) => ({
      response,
      revision: store.revision(),
    }));
    const [{ response, revision }] = await Promise.all([watching, createLater('at-start', 50)]);
    expect(response.status).toBe(200);
    expect(revision).toBeGreaterThanOrEqual(future);
    const events = response.stream![Symbol.asyncIterator]();
    await call('POST', PODS, { body: pod('after-start') });
    const first = (await events.next()).value as WatchEvent;
    expect(first.type).toBe('ADDED');
    expect((first.object as { metadata: { name: string } }).metadata.name).toBe('after-start');
    controller.abort();
    await events.return?.(undefined);
  });

  it('stops waiting when the client goes away or the server stops', async () => {
    const slow = startApi(60_000);
    const slowList = (signal?: AbortSignal) =>
      slow.api.handle({
        method: 'GET',
        path: PODS,
        query: { resourceVersion: String(store.revision() + 1) },
        headers: { authorization: `Bearer ${slow.token}` },
        signal,
      });

    const client = new AbortController();
    const started = Date.now();
    const abandoned = slowList(client.signal);
    setTimeout(() => client.abort(), 50);
    const response = await abandoned;
    expect(response.status).toBe(504);
    expect((response.body as { message: string }).message).toMatch(/^Timeout: the client went away while waiting for resource version \d+/);
    expect(Date.now() - started).toBeLessThan(1_000);

    const stopped = slowList();
    setTimeout(() => slow.api.stop(), 50);
    expect((await stopped).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
