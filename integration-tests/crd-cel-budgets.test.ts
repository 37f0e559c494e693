import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Agent, request, type RequestOptions } from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The CEL rules a hostile user once froze the API server with (689 s for eight chained replace() calls,
// 215 s for one replace() on a 600 KB string, seconds per request for four nested all()), sent through
// @kubernetes/client-node to a real `skiff up` while a second client asks /healthz every 50 ms: each CRD is
// refused at create naming the rule, or its custom resource is answered at once, and no ping waits a second.

const GROUP = 'budgets.example.com';
const PING_EVERY_MS = 50;
/** Only a server whose event loop is blocked answers a health check this late. */
const PING_BOUND_MS = 1_000;

let skiff: RunningSkiff;
let kc: k8s.KubeConfig;
let crds: k8s.ApiextensionsV1Api;
let objects: k8s.CustomObjectsApi;
const dataDir = tempDir('crd-cel-budgets');

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '0']);
  kc = new k8s.KubeConfig();
  kc.loadFromFile(skiff.kubeconfig);
  crds = kc.makeApiClient(k8s.ApiextensionsV1Api);
  objects = kc.makeApiClient(k8s.CustomObjectsApi);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Asks /healthz every 50 ms on a connection of its own until stopped; reports the slowest answer. */
async function pingHealthz(): Promise<{ stop(): Promise<{ slowestMs: number; pings: number }> }> {
  const options: RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: options.ca, cert: options.cert, key: options.key });
  const url = new URL('/healthz', skiff.server);
  let slowestMs = 0;
  let pings = 0;
  let inFlight: Promise<void> = Promise.resolve();
  const ping = () =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      const req = request(url, { agent }, (res) => {
        res.resume();
        res.once('end', () => {
          slowestMs = Math.max(slowestMs, performance.now() - started);
          pings++;
          resolve();
        });
      });
      req.once('error', reject);
      req.end();
    });
  let running = true;
  const loop = (async () => {
    while (running) {
      inFlight = ping();
      await Promise.all([inFlight, new Promise((r) => setTimeout(r, PING_EVERY_MS))]);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      return { slowestMs, pings };
    },
  };
}

interface Answer {
  code: number;
  status?: { kind?: string; reason?: string; message?: string; details?: { causes?: { field?: string; message?: string }[] } };
}

/** The HTTP status and Status body a client-node call ended with. */
async function answer(call: Promise<unknown>): Promise<Answer> {
  try {
    await call;
    return { code: 201 };
  } catch (err) {
    if (!(err instanceof k8s.ApiException)) throw err;
    const body = err.body as unknown;
    return { code: err.code, status: typeof body === 'string' ? JSON.parse(body) : (body as Answer['status']) };
  }
}

function crd(plural: string, kind: string, spec: k8s.V1JSONSchemaProps): k8s.V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

async function established(name: string): Promise<void> {
  await waitFor(
    `${name} Established`,
    async () => {
      const stored = await crds.readCustomResourceDefinition({ name });
      return stored.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    },
    { timeoutMs: 15_000 },
  );
}

/** Creates the CRD, then (if it was accepted) one custom resource, while /healthz is pinged. */
async function hostile(plural: string, kind: string, schema: k8s.V1JSONSchemaProps, spec: unknown) {
  const pinger = await pingHealthz();
  let created: Answer | undefined;
  let resource: Answer | undefined;
  let resourceMs = 0;
  try {
    created = await answer(crds.createCustomResourceDefinition({ body: crd(plural, kind, schema) }));
    if (created.code === 201) {
      await established(`${plural}.${GROUP}`);
      const started = performance.now();
      resource = await answer(
        objects.createNamespacedCustomObject({
          group: GROUP,
          version: 'v1',
          namespace: 'default',
          plural,
          body: { apiVersion: `${GROUP}/v1`, kind, metadata: { name: 'x' }, spec },
        }),
      );
      resourceMs = performance.now() - started;
    }
  } finally {
    const health = await pinger.stop();
    expect(health.pings).toBeGreaterThan(0);
    expect(health.slowestMs, 'the slowest /healthz answer (ms)').toBeLessThan(PING_BOUND_MS);
  }
  return { created: created!, resource, resourceMs };
}

const causes = (a: Answer | undefined) => (a?.status?.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
const RULE_PATH = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule';

describe('CEL rules that once stalled the server', () => {
  it('eight chained replace() calls: the CRD is refused, naming the rule and its estimated cost', async () => {
    const chain = `self.s${".replace('a','aa')".repeat(8)} != ''`;
    const { created } = await hostile(
      'chains',
      'Chain',
      { type: 'object', properties: { s: { type: 'string' } }, x_kubernetes_validations: [{ rule: chain }] },
      { s: 'a'.repeat(200_000) },
    );
    expect(created.code).toBe(422);
    expect(created.status).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    expect(causes(created)[0]).toMatch(
      new RegExp(`^${RULE_PATH.replace(/[.[\]]/g, '\\$&')}: Forbidden: estimated rule cost exceeds budget by factor of \\d+\\.\\dx`),
    );
    expect(created.status?.message).toContain(`${RULE_PATH}: Forbidden: estimated rule cost exceeds budget`);
  });

  it("replace('-','_') on a 600 KB string: the CRD is accepted and the custom resource answered at once", async () => {
    const { created, resource, resourceMs } = await hostile(
      'dashes',
      'Dash',
      { type: 'object', properties: { s: { type: 'string', x_kubernetes_validations: [{ rule: "self.replace('-','_') != 'x'" }] } } },
      { s: '-'.repeat(600_000) },
    );
    expect(created.code).toBe(201);
    expect(resource?.code).toBe(201);
    expect(resourceMs).toBeLessThan(10_000);
  });

  it('four nested all() over a list without maxItems: the CRD is refused, naming the rule', async () => {
    const { created } = await hostile(
      'nests',
      'Nest',
      {
        type: 'object',
        properties: { xs: { type: 'array', items: { type: 'integer' } } },
        x_kubernetes_validations: [{ rule: 'self.xs.all(a, self.xs.all(b, self.xs.all(c, self.xs.all(d, a + b + c + d >= 0))))' }],
      },
      { xs: Array.from({ length: 60 }, (_, i) => i) },
    );
    expect(created.code).toBe(422);
    expect(causes(created)).toEqual([
      `${RULE_PATH}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      `${RULE_PATH}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      'spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    ]);
  });

  it('a rule within its estimate that costs more than one call may spend: the custom resource is a 422 at once', async () => {
    // With maxItems 1000 the pairwise rule is estimated under the 10M limit, but a full list costs about
    // 8M to check, past the 1M one evaluation may spend.
    const rule = 'self.xs.all(a, self.xs.all(b, a != b || a == b))';
    const { created, resource, resourceMs } = await hostile(
      'pairs',
      'Pair',
      { type: 'object', properties: { xs: { type: 'array', maxItems: 1000, items: { type: 'integer' } } }, x_kubernetes_validations: [{ rule }] },
      { xs: Array.from({ length: 1000 }, (_, i) => i) },
    );
    expect(created.code).toBe(201);
    expect(resource?.code).toBe(422);
    expect(resource?.status).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    expect(causes(resource)).toEqual([
      `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${rule}`,
    ]);
    expect(resourceMs).toBeLessThan(10_000);
  });
});
