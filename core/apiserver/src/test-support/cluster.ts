import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UserInfo } from '@skiff/api';
import { CHAIN_STAGE, definePlugin, Kernel, LIFECYCLE_STAGE, type AuthzAttributes, type AuthzDecision, type SkiffPlugin } from '@skiff/kernel';
import { openLmdbStore, type Store } from '@skiff/store';
import apiServerPlugin, { type ApiServerInfo } from '../plugin.js';
import { TEST_DEFINITIONS } from './definitions.js';

export const USERS: Record<string, UserInfo> = {
  'admin-token': { username: 'admin', uid: 'admin', groups: ['system:masters', 'system:authenticated'] },
  'alice-token': { username: 'alice', uid: 'alice', groups: ['system:authenticated'] },
};

/** Admin (system:masters, allowed by the server itself) may do anything; alice may read, except where a test's policy says otherwise. */
export type Policy = (attributes: AuthzAttributes) => AuthzDecision;

const defaultPolicy: Policy = (attributes) => {
  if (['get', 'list', 'watch'].includes(attributes.verb)) return { decision: 'allow' };
  return undefined;
};

export interface TestServerOptions {
  plugins?: SkiffPlugin<any>[];
  policy?: Policy;
  apiServerOptions?: Record<string, unknown>;
  /** Register the test definitions (default true). */
  testDefinitions?: boolean;
}

export interface Response {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
  /** The body's bytes, for binary (protobuf) answers. */
  raw: Buffer;
  json: any;
}

export interface WatchConnection {
  response: Promise<IncomingMessage>;
  events: { type: string; object: any }[];
  /** Resolves with the first event (at or after `from`) that satisfies `match`, polling until the deadline. */
  next(match?: (event: { type: string; object: any }) => boolean, timeoutMs?: number): Promise<{ type: string; object: any }>;
  ended: Promise<void>;
  close(): void;
}

export interface TestServer {
  kernel: Kernel;
  info: ApiServerInfo;
  dataDir: string;
  store: Store;
  request(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; headers?: Record<string, string>; contentType?: string },
  ): Promise<Response>;
  watch(path: string, options?: { token?: string; headers?: Record<string, string> }): WatchConnection;
  stop(): Promise<void>;
}

function storePlugin(path: string): SkiffPlugin {
  return definePlugin({
    name: 'test-store',
    version: '0.1.0',
    kernel: '^0.1.0',
    provides: ['store'],
    apply(kernel) {
      let store: Store | undefined;
      kernel.lifecycle('test-store', LIFECYCLE_STAGE.STORE, {
        async start() {
          store = await openLmdbStore({ path, compactionIntervalMs: 0 });
          kernel.provide('store', store);
        },
        async stop() {
          await store?.close();
        },
      });
    },
  });
}

const authnPlugin = definePlugin({
  name: 'test-authn',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.authenticate.tap({ name: 'test-authn', stage: CHAIN_STAGE.TOKEN }, (request) => {
      const header = request.headers.authorization;
      if (!header?.startsWith('Bearer ')) return undefined;
      const user = USERS[header.slice(7)];
      if (!user) request.errors.push('invalid bearer token');
      return user ? { user } : undefined;
    });
  },
});

function authzPlugin(policy: Policy): SkiffPlugin {
  return definePlugin({
    name: 'test-authz',
    version: '0.1.0',
    kernel: '^0.1.0',
    apply(kernel) {
      kernel.hooks.authorize.tap('test-authz', (attributes) => policy(attributes));
    },
  });
}

const definitionsPlugin = definePlugin({
  name: 'test-definitions',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.resources.tap('test-definitions', (registry) => {
      for (const definition of TEST_DEFINITIONS) registry.register(definition);
    });
  },
});

/** Starts a kernel with the API server on a free port, a real LMDB store and test authn/authz in a temp dir. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-apiserver-'));
  const kernel = new Kernel({ config: { dataDir, host: '127.0.0.1', port: 0, logLevel: 'silent' } });
  kernel.use(storePlugin(join(dataDir, 'store')));
  kernel.use(apiServerPlugin, { watchBookmarkIntervalMs: 200, ...options.apiServerOptions });
  kernel.use(authnPlugin);
  kernel.use(authzPlugin(options.policy ?? defaultPolicy));
  if (options.testDefinitions !== false) kernel.use(definitionsPlugin);
  for (const plugin of options.plugins ?? []) kernel.use(plugin);
  await kernel.start();
  const info = kernel.resolve('apiServerInfo');
  const agent = new Agent({ keepAlive: true, ca: info.caPem });

  const request: TestServer['request'] = (method, path, requestOptions = {}) =>
    new Promise((resolve, reject) => {
      const token = requestOptions.token === undefined ? 'admin-token' : requestOptions.token;
      const body =
        requestOptions.body === undefined
          ? undefined
          : typeof requestOptions.body === 'string' || Buffer.isBuffer(requestOptions.body)
            ? requestOptions.body
            : JSON.stringify(requestOptions.body);
      const headers: Record<string, string> = { accept: 'application/json', ...requestOptions.headers };
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) {
        headers['content-type'] = requestOptions.contentType ?? 'application/json';
        // Node sends DELETE bodies without framing unless told their length.
        headers['content-length'] = String(Buffer.byteLength(body));
      }
      const req = httpsRequest(`${info.url}${path}`, { method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, raw, json });
        });
      });
      req.on('error', reject);
      req.end(body);
    });

  const watch: TestServer['watch'] = (path, watchOptions = {}) => {
    const events: { type: string; object: any }[] = [];
    let buffer = '';
    let endedResolve!: () => void;
    const ended = new Promise<void>((resolve) => (endedResolve = resolve));
    const req = httpsRequest(`${info.url}${path}`, {
      method: 'GET',
      ca: info.caPem,
      headers: { accept: 'application/json', authorization: `Bearer ${watchOptions.token ?? 'admin-token'}`, ...watchOptions.headers },
    });
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      req.on('response', (res) => {
        res.on('data', (chunk: Buffer) => {
          buffer += chunk.toString('utf8');
          let newline: number;
          while ((newline = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, newline);
            buffer = buffer.slice(newline + 1);
            if (line.trim()) events.push(JSON.parse(line));
          }
        });
        res.on('end', endedResolve);
        res.on('close', endedResolve);
        resolve(res);
      });
      req.on('error', (err) => {
        endedResolve();
        reject(err);
      });
    });
    response.catch(() => undefined);
    req.end();
    let cursor = 0;
    return {
      response,
      events,
      ended,
      async next(match = () => true, timeoutMs = 5000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          while (cursor < events.length) {
            const event = events[cursor++]!;
            if (match(event)) return event;
          }
          if (Date.now() > deadline)
            throw new Error(
              `no matching watch event within ${timeoutMs} ms; saw ${JSON.stringify(events.map((e) => `${e.type} ${e.object?.metadata?.name ?? ''}`))}`,
            );
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      },
      close: () => req.destroy(),
    };
  };

  return {
    kernel,
    info,
    dataDir,
    store: kernel.resolve('store'),
    request,
    watch,
    async stop() {
      agent.destroy();
      await kernel.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(extra.metadata as object) },
  spec: { containers: [{ name: 'web', image: 'nginx' }], ...(extra.spec as object) },
});
