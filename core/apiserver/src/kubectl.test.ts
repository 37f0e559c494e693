import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, waitFor } from '@skiff/kernel';
import { decodeProtobufObject } from '@skiff/api/protobuf';
import { pod, startTestServer, type TestServer } from './test-support/cluster.js';

/** Provides the admin token the way an authentication plugin does, so admin.kubeconfig carries it. */
const adminCredential = definePlugin({
  name: 'test-admin-credential',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.lifecycle('test-admin-credential', -250, { start: () => kernel.provide('adminCredential', { token: 'admin-token' }) });
  },
});

let server: TestServer;
let cacheDir: string;

// The built-in kinds, as a real cluster serves them.
beforeAll(async () => {
  server = await startTestServer({ plugins: [adminCredential], testDefinitions: false });
  cacheDir = mkdtempSync(join(tmpdir(), 'skiff-kubectl-cache-'));
});
afterAll(async () => {
  await server?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the kubectl on PATH: a dispatcher that picks kubectl 1.<minor> from the server's /version. */
function kubectl(args: string[], input?: string): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', join(server.dataDir, 'admin.kubeconfig'), '--cache-dir', cacheDir, ...args],
      { timeout: 20_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input ?? '');
  });
}

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

const PODS = '/api/v1/namespaces/default/pods';

describe('the real kubectl', () => {
  it('lists namespaces as a table', async () => {
    const out = await ok(['get', 'ns']);
    expect(out.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+AGE/);
    expect(out).toMatch(/^default\s+Active\s+\d+s/m);
    expect(out).toMatch(/^kube-system\s+Active/m);
  });

  it('reports the server version the dispatcher chose by', async () => {
    expect(await ok(['version'])).toContain('Server Version: v1.36.0-skiff.0.1.0');
  });

  it('creates and reads a namespace, and reports a duplicate and a missing one as kubectl users know', async () => {
    expect(await ok(['create', 'namespace', 'from-kubectl'])).toContain('namespace/from-kubectl created');
    const created = JSON.parse(await ok(['get', 'namespace', 'from-kubectl', '-o', 'json']));
    expect(created).toMatchObject({ kind: 'Namespace', metadata: { name: 'from-kubectl' }, status: { phase: 'Active' } });
    const duplicate = await kubectl(['create', 'namespace', 'from-kubectl']);
    expect(duplicate.stderr).toContain('Error from server (AlreadyExists): namespaces "from-kubectl" already exists');
    expect((await kubectl(['get', 'namespace', 'nowhere'])).stderr).toContain('Error from server (NotFound): namespaces "nowhere" not found');
  });

  it('shows pods across namespaces with their namespace column', async () => {
    await server.request('POST', '/api/v1/namespaces/kube-system/pods', { body: pod('system-pod') });
    const out = await ok(['get', 'pods', '-A']);
    expect(out.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS/);
    expect(out).toMatch(/^kube-system\s+system-pod\s+0\/1\s+Pending/m);
  });

  it('applies a manifest client-side twice (created, configured), then server-side', async () => {
    const manifest = (holder: string) =>
      `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: settings\nspec:\n  holderIdentity: ${holder}\n  leaseDurationSeconds: 15\n`;
    expect(await ok(['apply', '-f', '-'], manifest('one'))).toContain('lease.coordination.k8s.io/settings created');
    expect(await ok(['apply', '-f', '-'], manifest('two'))).toContain('lease.coordination.k8s.io/settings configured');
    expect(await ok(['get', 'lease', 'settings', '-o', 'jsonpath={.spec.holderIdentity}'])).toBe('two');
    expect(await ok(['apply', '--server-side', '-f', '-'], manifest('three'))).toContain('lease.coordination.k8s.io/settings serverside-applied');
    const applied = JSON.parse(await ok(['get', 'lease', 'settings', '-o', 'json', '--show-managed-fields']));
    expect(applied.metadata.managedFields).toContainEqual(expect.objectContaining({ manager: 'kubectl', operation: 'Apply' }));
  });

  it('waits for a condition through list + watch', async () => {
    await server.request('POST', PODS, { body: pod('ready-soon') });
    const waiting = kubectl(['wait', '--for=condition=Ready', 'pod/ready-soon', '--timeout=15s']);
    const current = (await server.request('GET', `${PODS}/ready-soon`)).json;
    const status = {
      ...current.status,
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
    };
    expect((await server.request('PUT', `${PODS}/ready-soon/status`, { body: { ...current, status } })).status).toBe(200);
    const result = await waiting;
    expect(result.stdout).toContain('pod/ready-soon condition met');
    expect(result.code).toBe(0);
  });

  it('deletes a pod on a node gracefully and returns once its kubelet finishes the deletion', async () => {
    await server.request('POST', PODS, { body: pod('graceful', { spec: { nodeName: 'node-1' } }) });
    const deleting = kubectl(['delete', 'pod', 'graceful']);
    await waitFor('the pod to be marked for deletion', async () => (await server.request('GET', `${PODS}/graceful`)).json?.metadata?.deletionTimestamp);
    // What the kubelet does once the containers have stopped.
    expect((await server.request('DELETE', `${PODS}/graceful`, { body: { gracePeriodSeconds: 0 } })).status).toBe(200);
    const result = await deleting;
    expect(result.stdout).toContain('pod "graceful" deleted');
    expect(result.code).toBe(0);
  });

  it('scales a deployment through its scale subresource', async () => {
    const labels = { app: 'web' };
    await server.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
      },
    });
    expect(await ok(['scale', 'deployment', 'web', '--replicas=3'])).toContain('deployment.apps/web scaled');
    expect(await ok(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}'])).toBe('3');
  });

  it('reads a list long enough to be streamed in chunks, as JSON and as a table', async () => {
    await server.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bulk' } } });
    for (let i = 0; i < 1200; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          server.request('POST', '/api/v1/namespaces/bulk/configmaps', {
            body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i + j}` }, data: { v: 'x'.repeat(600) } },
          }),
        ),
      );
    const raw = JSON.parse(await ok(['get', '--raw', '/api/v1/namespaces/bulk/configmaps']));
    expect(raw).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
    expect(raw.items).toHaveLength(1200);
    expect(new Set(raw.items.map((item: { metadata: { name: string } }) => item.metadata.name)).size).toBe(1200);
    const listed = JSON.parse(await ok(['get', 'configmaps', '-n', 'bulk', '-o', 'json']));
    expect(listed.items).toHaveLength(1200);
    expect((await ok(['get', 'configmaps', '-n', 'bulk', '--no-headers'])).trim().split('\n')).toHaveLength(1200);
    // A protobuf client (client-go's informers) gets the same list, assembled from each item's cached bytes;
    // the second read is answered from the cache.
    for (let round = 0; round < 2; round++) {
      const answer = await server.request('GET', '/api/v1/namespaces/bulk/configmaps', {
        headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' },
      });
      expect(answer.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
      const decoded = decodeProtobufObject(answer.raw) as unknown as { kind: string; metadata: { resourceVersion: string }; items: unknown[] };
      expect(decoded.kind).toBe('ConfigMapList');
      expect(decoded.metadata.resourceVersion).toBe(raw.metadata.resourceVersion);
      expect(decoded.items).toEqual(raw.items.map(({ apiVersion: _a, kind: _k, ...item }: Record<string, unknown>) => item));
    }
  });

  it('lists events written through events.k8s.io/v1 (kube-scheduler’s recorder) with kubectl get events', async () => {
    const created = await server.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      body: {
        metadata: { name: 'web-1.sched', namespace: 'default' },
        eventTime: new Date().toISOString().replace('Z', '000Z'),
        reportingController: 'default-scheduler',
        reportingInstance: 'default-scheduler-node-1',
        action: 'Binding',
        reason: 'Scheduled',
        regarding: { kind: 'Pod', namespace: 'default', name: 'web-1', apiVersion: 'v1' },
        note: 'Successfully assigned default/web-1 to node-1',
        type: 'Normal',
      },
    });
    expect(created.status, created.text).toBe(201);
    const row = (await ok(['get', 'events', '-n', 'default', '--no-headers'])).split('\n').find((line) => line.includes('Scheduled'));
    expect(row).toMatch(/Normal\s+Scheduled\s+pod\/web-1\s+Successfully assigned default\/web-1 to node-1/);
  });

  it('answers auth can-i through the authorization chain', async () => {
    expect((await ok(['auth', 'can-i', 'create', 'pods'])).trim()).toBe('yes');
  });
});
