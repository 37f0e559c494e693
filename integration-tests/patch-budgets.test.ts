import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { parse } from 'yaml';
import { CLUSTER_TIMEOUT, Kubectl, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The patches a hostile user once stalled the API server with, sent by the real kubectl to a real `skiff up`
// while another thread asks /healthz every 50 ms: a JSON patch copying a list into itself 22 times (55.6 s,
// 1 GB), one of 10,001 operations, a strategic merge patch adding 40,000 containers (19.5 s), an update
// carrying 19,000 managedFields entries (18 s), a merge patch changing 130,000 fields (a 500). Each is answered
// with a Status (or succeeds) at once, and no health check waits a second.

const PING_EVERY_MS = 50;
/** Only a server whose event loop is blocked answers a health check this late. */
const PING_BOUND_MS = 1_000;
const GROUP = 'budgets.example.com';

// Its own thread, so building and sending large patches in the test never delays a ping.
const PINGER = `
const { parentPort, workerData } = require('node:worker_threads');
const https = require('node:https');
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: workerData.ca });
let slowestMs = 0;
let pings = 0;
let running = true;
parentPort.on('message', (message) => {
  if (message === 'reset') { slowestMs = 0; pings = 0; }
  else if (message === 'read') parentPort.postMessage({ slowestMs, pings });
  else if (message === 'stop') running = false;
});
(async () => {
  while (running) {
    const started = performance.now();
    await new Promise((resolve) => {
      const req = https.get(workerData.url, { agent }, (res) => { res.resume(); res.on('end', resolve); });
      req.on('error', resolve);
    });
    slowestMs = Math.max(slowestMs, performance.now() - started);
    pings++;
    await new Promise((resolve) => setTimeout(resolve, ${PING_EVERY_MS}));
  }
  agent.destroy();
})();
`;

let skiff: RunningSkiff;
let kubectl: Kubectl;
let pinger: Worker;
const dataDir = tempDir('patch-budgets');
const files = tempDir('patch-budgets-files');

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '0']);
  kubectl = new Kubectl(skiff.kubeconfig);
  const config = parse(readFileSync(skiff.kubeconfig, 'utf8'));
  const ca = Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64').toString();
  pinger = new Worker(PINGER, { eval: true, workerData: { url: new URL('/healthz', skiff.server).href, ca } });
  writeFileSync(
    join(files, 'crd.json'),
    JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `blobs.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'blobs', singular: 'blob', kind: 'Blob', listKind: 'BlobList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
          },
        ],
      },
    }),
  );
  await kubectl.ok('create', '-f', join(files, 'crd.json'));
  await waitFor('blobs served', async () => (await kubectl.run(['get', 'blobs'])).code === 0, CLUSTER_TIMEOUT);
});
afterAll(async () => {
  await pinger?.terminate();
  kubectl?.cleanup();
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

function pingerSays(message: 'reset' | 'read'): Promise<{ slowestMs: number; pings: number }> {
  if (message === 'reset') {
    pinger.postMessage('reset');
    return Promise.resolve({ slowestMs: 0, pings: 0 });
  }
  return new Promise((resolve) => {
    pinger.once('message', resolve);
    pinger.postMessage('read');
  });
}

/** Writes `content` to a file for kubectl to send. */
function file(name: string, content: unknown): string {
  const path = join(files, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** Runs kubectl while /healthz is pinged; fails the test if a ping waited a second or more. */
async function hostile(args: string[]): Promise<{ code: number | null; output: string }> {
  await pingerSays('reset');
  const result = await kubectl.run(args, { timeoutMs: 120_000 });
  // A last ping after the answer: a server still busy with the request shows here too.
  await new Promise((resolve) => setTimeout(resolve, 3 * PING_EVERY_MS));
  const health = await pingerSays('read');
  expect(health.pings).toBeGreaterThan(0);
  expect(health.slowestMs, 'the slowest /healthz answer (ms)').toBeLessThan(PING_BOUND_MS);
  return { code: result.code, output: result.stderr + result.stdout };
}

const blob = (name: string, spec: unknown) => ({ apiVersion: `${GROUP}/v1`, kind: 'Blob', metadata: { name, namespace: 'default' }, spec });
const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'default' },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  },
});

describe('patches that once stalled the server', () => {
  it('a JSON patch copying a list into itself 22 times: a 422 at the copy budget, nothing stored', async () => {
    await kubectl.ok('create', '-f', file('grow.json', blob('grow', { xs: ['abc'] })));
    const copies = Array.from({ length: 22 }, () => ({ op: 'copy', from: '/spec/xs', path: '/spec/xs/-' }));
    const { code, output } = await hostile(['patch', 'blob', 'grow', '--type=json', '--patch-file', file('grow-patch.json', copies)]);
    expect(code).not.toBe(0);
    // kubectl's words for a 422 Invalid, then the Status message.
    expect(output).toContain('The request is invalid: /spec/xs/-: json patch copy operation 18 does not apply');
    expect(output).toContain('would take the bytes copied by this patch past the limit of 3145728');
    expect((await kubectl.json('get', 'blob', 'grow')).spec).toEqual({ xs: ['abc'] });
  });

  it('a JSON patch of 10,001 operations: 413, as Kubernetes words it', async () => {
    await kubectl.ok('create', 'configmap', 'ops');
    const operations = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'ops' }));
    const { code, output } = await hostile(['patch', 'configmap', 'ops', '--type=json', '--patch-file', file('ops.json', operations)]);
    expect(code).not.toBe(0);
    expect(output).toContain('Error from server (RequestEntityTooLarge)');
    expect(output).toContain('The allowed maximum operations in a JSON patch is 10000, got 10001');
  });

  it('a strategic merge patch adding 40,000 containers: 413, the Deployment unchanged', async () => {
    await kubectl.ok('create', '-f', file('wide.json', deployment('wide')));
    const containers = Array.from({ length: 40_000 }, (_, i) => ({ name: `c${i}`, image: 'busybox' }));
    const patch = file('wide-patch.json', { spec: { template: { spec: { containers } } } });
    const { code, output } = await hostile(['patch', 'deployment', 'wide', '--type=strategic', '--patch-file', patch]);
    expect(code).not.toBe(0);
    expect(output).toContain('Error from server (RequestEntityTooLarge)');
    expect(output).toContain('would be larger than the limit of 3145728 bytes');
    expect((await kubectl.json('get', 'deployment', 'wide')).spec.template.spec.containers).toHaveLength(1);
  });

  it('the same 40,000 containers applied server-side: 413', async () => {
    const wide = deployment('wide-applied');
    wide.spec.template.spec.containers = Array.from({ length: 40_000 }, (_, i) => ({ name: `c${i}`, image: 'busybox' }));
    const { code, output } = await hostile(['apply', '--server-side', '-f', file('wide-applied.json', wide)]);
    expect(code).not.toBe(0);
    expect(output).toContain('would be larger than the limit of 3145728 bytes');
  });

  it('an update carrying 19,000 managedFields entries: stored with 10 Update entries, the oldest merged', async () => {
    await kubectl.ok('create', 'configmap', 'managers', '--from-literal=a=x');
    const object = await kubectl.json('get', 'configmap', 'managers');
    object.metadata.managedFields = Array.from({ length: 19_000 }, (_, i) => ({
      manager: `m${i}`,
      operation: 'Update',
      apiVersion: 'v1',
      time: '2026-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { [`f:k${i}`]: {} } },
    }));
    const { code, output } = await hostile(['replace', '-f', file('managers.json', object)]);
    expect(code, output).toBe(0);
    const stored = await kubectl.json('get', 'configmap', 'managers', '--show-managed-fields');
    const managers = stored.metadata.managedFields.map((entry: { manager: string }) => entry.manager);
    expect(managers).toHaveLength(10);
    expect(managers).toContain('ancient-changes');
  });

  it('a merge patch changing 130,000 fields: applied (once a 500 from a stack overflow)', async () => {
    await kubectl.ok('create', '-f', file('many.json', blob('many', {})));
    const fields = Object.fromEntries(Array.from({ length: 130_000 }, (_, i) => [`k${i}`, 1]));
    const { code, output } = await hostile(['patch', 'blob', 'many', '--type=merge', '--patch-file', file('many-patch.json', { spec: fields })]);
    expect(code, output).toBe(0);
    expect(Object.keys((await kubectl.json('get', 'blob', 'many')).spec)).toHaveLength(130_000);
  });
});
