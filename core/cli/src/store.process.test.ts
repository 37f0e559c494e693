import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { waitFor } from '@skiff/kernel';
import { EtcdCluster } from '@skiff/plugin-store-etcd/testing';
import { afterEach, describe, expect, it } from 'vitest';

// The built command, as a user runs it (build core/cli first: npm run build).
const SKIFF_BIN = fileURLToPath(new URL('../bin/skiff.js', import.meta.url));
const run = promisify(execFile);

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(stop));
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-move-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** SIGINT, as Ctrl-C: the cluster stops and closes its store. Resolves with the exit code. */
function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGINT');
  });
}

/** Starts `skiff up <args>` and waits for its ready line. */
async function up(args: string[], timeoutMs = 120_000): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SKIFF_BIN, 'up', ...args, '--port', '0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`skiff up not ready after ${timeoutMs} ms:\n${output}`)), timeoutMs);
    child.stdout!.on('data', () => {
      if (!/^ready: https:\/\//m.test(output)) return;
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`skiff up exited with ${code}:\n${output}`));
    });
  });
  return child;
}

/** A one-shot skiff command; resolves with its stdout and stderr, rejects with them when it fails. */
async function skiff(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [SKIFF_BIN, ...args], { maxBuffer: 64 * 1024 * 1024 });
}

interface Pod {
  metadata: { name: string; uid: string };
  spec: { nodeName?: string };
  status?: { phase?: string };
}

describe('moving a cluster from LMDB to etcd', () => {
  it('skiff store export from a stopped standard cluster, skiff store import into etcd, skiff up on etcd: the objects, uids and Secret are there, sealed in etcd', async () => {
    const work = tempDir();
    const dataDir = join(work, 'data');
    const kubeconfig = join(dataDir, 'admin.kubeconfig');
    const kubectl = async (...args: string[]) => (await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;
    const json = async <T>(...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json')) as T;
    const runningPods = async () =>
      (await json<{ items: Pod[] }>('get', 'pods', '-n', 'shop', '-l', 'app=web')).items.filter((pod) => pod.spec.nodeName && pod.status?.phase === 'Running');
    const password = 'correct-horse-battery-staple';

    // 1. The standard preset on LMDB, Secrets encrypted at rest.
    const lmdbCluster = await up(['--preset', 'standard', '--data-dir', dataDir]);
    await kubectl('create', 'namespace', 'shop');
    await kubectl('create', 'deployment', 'web', '-n', 'shop', '--image=nginx', '--replicas=2');
    await kubectl('create', 'configmap', 'settings', '-n', 'shop', '--from-literal=mode=fast');
    await kubectl('create', 'secret', 'generic', 'db', '-n', 'shop', `--from-literal=password=${password}`);
    await waitFor('two running pods of the Deployment on LMDB', async () => (await runningPods()).length === 2, { timeoutMs: 120_000 });
    const before = {
      namespace: (await json<Pod>('get', 'namespace', 'shop')).metadata.uid,
      deployment: (await json<Pod>('get', 'deployment', 'web', '-n', 'shop')).metadata.uid,
      secret: (await json<Pod>('get', 'secret', 'db', '-n', 'shop')).metadata.uid,
      pods: (await runningPods()).map((pod) => pod.metadata.uid).sort(),
    };
    expect(await stop(lmdbCluster)).toBe(0);

    // 2. Export the stopped cluster.
    const file = join(work, 'cluster.jsonl');
    const exported = await skiff('store', 'export', '--preset', 'standard', '--data-dir', dataDir, '--output', file);
    expect(exported.stdout).toMatch(/^skiff: exported \d+ objects at revision \d+ from @skiff\/store to /m);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // 3. Import into a new etcd, through a config that names it, with the same data dir (CA, encryption key).
    const etcd = await EtcdCluster.start(1);
    cleanups.push(() => etcd.stop());
    const config = join(work, 'skiff.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        preset: 'standard',
        plugins: [
          ['@skiff/store', false],
          ['@skiff/plugin-store-etcd', { endpoints: etcd.endpoints, compactionIntervalMs: 0 }],
        ],
      }),
    );
    const imported = await skiff('store', 'import', file, '--config', config, '--data-dir', dataDir);
    const count = /^skiff: exported (\d+) objects/m.exec(exported.stdout)![1];
    expect(imported.stdout).toMatch(
      new RegExp(`^skiff: imported ${count} objects into @skiff/plugin-store-etcd \\(exported from @skiff/store at revision \\d+`, 'm'),
    );
    expect(imported.stdout).toMatch(/\b1 Deployment\b/);

    // A second import into the same etcd is refused, and says what to do.
    await expect(skiff('store', 'import', file, '--config', config, '--data-dir', dataDir)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(
        /^skiff: the target store \(@skiff\/plugin-store-etcd\) already holds objects under \/registry\/ \(such as \S+\): import into a new etcd cluster, or another keyPrefix of the etcd plugin\n$/,
      ),
    });

    // 4. The cluster on etcd.
    await up(['--config', config, '--data-dir', dataDir]);
    expect((await json<Pod>('get', 'namespace', 'shop')).metadata.uid).toBe(before.namespace);
    expect((await json<Pod>('get', 'deployment', 'web', '-n', 'shop')).metadata.uid).toBe(before.deployment);
    expect((await json<Pod>('get', 'secret', 'db', '-n', 'shop')).metadata.uid).toBe(before.secret);
    expect(Buffer.from(await kubectl('get', 'secret', 'db', '-n', 'shop', '-o', 'jsonpath={.data.password}'), 'base64').toString()).toBe(password);
    expect(await kubectl('get', 'configmap', 'settings', '-n', 'shop', '-o', 'jsonpath={.data.mode}')).toBe('fast');
    await waitFor(
      'the same two pods running on etcd',
      async () =>
        (await runningPods())
          .map((pod) => pod.metadata.uid)
          .sort()
          .join() === before.pods.join(),
      {
        timeoutMs: 60_000,
      },
    );
    // The controllers, scheduler and simulated runtime work on the imported state: a third replica starts.
    await kubectl('scale', 'deployment', 'web', '-n', 'shop', '--replicas=3');
    await waitFor('three running pods on etcd', async () => (await runningPods()).length === 3, { timeoutMs: 120_000 });

    // 5. In etcd itself the Secret is sealed; the ConfigMap is plain JSON.
    const read = async (key: string) => {
      const answer = await fetch(`${etcd.endpoint(0)}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(key).toString('base64') }) });
      const { kvs } = (await answer.json()) as { kvs?: { value: string }[] };
      return Buffer.from(kvs![0]!.value, 'base64').toString('latin1');
    };
    const sealed = await read('/registry/secrets/shop/db');
    expect(sealed).toMatch(/^k8s:enc:/);
    expect(sealed).not.toContain(password);
    expect(sealed).not.toContain(Buffer.from(password).toString('base64'));
    expect(JSON.parse(await read('/registry/configmaps/shop/settings'))).toMatchObject({ data: { mode: 'fast' } });
  }, 600_000);
});
