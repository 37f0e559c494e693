import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '@skiff/kernel';
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

beforeAll(async () => {
  server = await startTestServer({ plugins: [adminCredential] });
  cacheDir = mkdtempSync(join(tmpdir(), 'skiff-kubectl-cache-'));
});
afterAll(async () => {
  await server?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', join(server.dataDir, 'admin.kubeconfig'), '--cache-dir', cacheDir, ...args], { timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input ?? '');
  });
}

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

describe('the real kubectl', () => {
  it('lists namespaces as a table', async () => {
    const out = await ok(['get', 'ns']);
    expect(out.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+AGE/);
    expect(out).toMatch(/^default\s+Active\s+\d+s/m);
    expect(out).toMatch(/^kube-system\s+Active/m);
  });

  it('reports the server version the dispatcher chose by', async () => {
    expect(await ok(['version'])).toContain('Server Version: v1.31.0-skiff.0.1.0');
  });

  it('creates, reads and deletes a namespace', async () => {
    expect(await ok(['create', 'namespace', 'from-kubectl'])).toContain('namespace/from-kubectl created');
    const created = JSON.parse(await ok(['get', 'namespace', 'from-kubectl', '-o', 'json']));
    expect(created).toMatchObject({ kind: 'Namespace', metadata: { name: 'from-kubectl' }, status: { phase: 'Active' } });
    const duplicate = await kubectl(['create', 'namespace', 'from-kubectl']);
    expect(duplicate.stderr).toContain('Error from server (AlreadyExists): namespaces "from-kubectl" already exists');
    expect(await ok(['delete', 'namespace', 'from-kubectl'])).toContain('namespace "from-kubectl" deleted');
    expect((await kubectl(['get', 'namespace', 'from-kubectl'])).stderr).toContain('Error from server (NotFound): namespaces "from-kubectl" not found');
  });

  it('shows pods across namespaces with their namespace column', async () => {
    await server.request('POST', '/api/v1/namespaces/kube-system/pods', { body: pod('system-pod') });
    const out = await ok(['get', 'pods', '-A']);
    expect(out).toMatch(/^kube-system\s+system-pod\s+Pending/m);
  });

  it('applies a manifest twice: created, then configured', async () => {
    const manifest = (value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: ${value}\n`;
    expect(await ok(['apply', '-f', '-'], manifest('one'))).toContain('configmap/settings created');
    expect(await ok(['apply', '-f', '-'], manifest('two'))).toContain('configmap/settings configured');
    expect(await ok(['get', 'configmap', 'settings', '-o', 'jsonpath={.data.mode}'])).toBe('two');
    expect(await ok(['apply', '--server-side', '-f', '-'], manifest('three'))).toContain('configmap/settings serverside-applied');
  });

  it('answers auth can-i through the authorization chain', async () => {
    expect((await ok(['auth', 'can-i', 'create', 'pods'])).trim()).toBe('yes');
  });
});
