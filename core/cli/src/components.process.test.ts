import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueClientCertificate, readClusterCa } from '@skiff/apiserver';
import { RESOURCES, type KubeObject } from '@skiff/api';
import { createClient, createClientFromKubeconfig, HttpsTransport } from '@skiff/client';
import { waitFor } from '@skiff/kernel';
import { afterEach, describe, expect, it } from 'vitest';

// The built command, as a user runs it (build core/cli first: npm run build).
const SKIFF_BIN = fileURLToPath(new URL('../bin/skiff.js', import.meta.url));

interface Running {
  child: ChildProcess;
  match: RegExpExecArray;
  output(): string;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(
    children.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGINT');
        }),
    ),
  );
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-split-'));
  dirs.push(dir);
  return dir;
}

/** Starts `skiff <args>` and waits for the line `ready` matches. */
async function skiff(args: string[], ready: RegExp, timeoutMs = 90_000): Promise<Running> {
  const child = spawn(process.execPath, [SKIFF_BIN, ...args, '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`skiff ${args[0]} not ready after ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const check = () => {
      const found = ready.exec(output);
      if (!found) return;
      clearTimeout(timer);
      resolve(found);
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`skiff ${args[0]} exited with ${code}:\n${output}`));
    });
  });
  return { child, match, output: () => output };
}

describe('the control plane as separate processes', () => {
  it('runs a Deployment with skiff apiserver, skiff controller-manager and skiff scheduler each in its own process', async () => {
    const dataDir = tempDir();
    const api = await skiff(['apiserver', '--preset', 'dev', '--data-dir', dataDir, '--port', '0', '--nodes', '1'], /^ready: API server (https:\/\/\S+)/m);
    const server = api.match[1]!;
    const common = ['--preset', 'dev', '--data-dir', dataDir, '--server', server];
    const controllers = await skiff(['controller-manager', ...common], /^ready: controller-manager/m);
    const scheduler = await skiff(['scheduler', ...common], /^ready: scheduler/m);
    expect(controllers.output()).toContain('leader election on');
    expect(scheduler.output()).toContain(server);

    const client = createClientFromKubeconfig(join(dataDir, 'admin.kubeconfig'));
    try {
      const labels = { app: 'split' };
      await client.create(
        RESOURCES.deployments,
        {
          metadata: { name: 'split' },
          spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
        },
        'default',
      );
      const running = async () => {
        const pods = await client.list<KubeObject & { spec?: { nodeName?: string }; status?: { phase?: string } }>(RESOURCES.pods, 'default', {
          labelSelector: 'app=split',
        });
        return pods.items.filter((pod) => pod.spec?.nodeName && pod.status?.phase === 'Running').length;
      };
      await waitFor('two running pods of the Deployment', async () => (await running()) === 2, { timeoutMs: 120_000 });
    } finally {
      client.close();
    }
  }, 300_000);

  it('a second API server with a copy of the PKI keeps the CA, serves its own address, and clients fail over to it', async () => {
    const first = tempDir();
    const second = tempDir();
    const a = await skiff(['apiserver', '--preset', 'dev', '--data-dir', first, '--port', '0'], /^ready: API server (https:\/\/\S+)/m);
    cpSync(join(first, 'pki'), join(second, 'pki'), { recursive: true });
    const b = await skiff(['apiserver', '--preset', 'dev', '--data-dir', second, '--host', '127.0.0.2', '--port', '0'], /^ready: API server (https:\/\/\S+)/m);

    const read = (dir: string, file: string) => readFileSync(join(dir, 'pki', file), 'utf8');
    expect(read(second, 'ca.crt')).toBe(read(first, 'ca.crt'));
    expect(read(second, 'apiserver.crt')).not.toBe(read(first, 'apiserver.crt'));
    expect(new X509Certificate(read(second, 'apiserver.crt')).checkIP('127.0.0.2')).toBe('127.0.0.2');
    expect(new X509Certificate(read(first, 'apiserver.crt')).checkIP('127.0.0.2')).toBeUndefined();

    // One credential from the shared CA is good at both.
    const ca = readClusterCa(first);
    const admin = issueClientCertificate(ca, { user: 'split-admin', groups: ['system:masters'] });
    const transport = new HttpsTransport({ server: '', servers: [a.match[1]!, b.match[1]!], caPem: ca.caPem, ...admin });
    const client = createClient(transport);
    try {
      await expect(client.list(RESOURCES.namespaces)).resolves.toMatchObject({ kind: 'NamespaceList' });
      expect(transport.server).toBe(`${a.match[1]}/`);
      a.child.kill('SIGKILL');
      await new Promise((resolve) => a.child.once('exit', resolve));
      await expect(client.list(RESOURCES.namespaces)).resolves.toMatchObject({ kind: 'NamespaceList' });
      expect(transport.server).toBe(`${b.match[1]}/`);
    } finally {
      client.close();
    }
  }, 300_000);
});
