import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { CLUSTER_TIMEOUT, Kubectl, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// A dev-preset cluster whose data dir is a real 20 MiB file system, filled until the store's commits fail.
const DISK_MIB = 20;
const NO_SPACE = /^the store's disk is full \((ENOSPC|EIO on a short write, \d+ KiB free)\): writes are refused until space is freed; reads keep working$/;

const mountPoint = tempDir('disk-full');
const dataDir = join(mountPoint, 'data');
// Space to give back: removing a file frees it at once, where deleting objects needs new LMDB pages first.
const filler = join(mountPoint, 'filler');
const blobDir = tempDir('disk-full-blob');
const blobFile = join(blobDir, 'blob');
let mounted = false;
let skiff: RunningSkiff | undefined;

beforeAll(() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_MIB}m,mode=0700`, 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`this test mounts a ${DISK_MIB} MiB tmpfs as the data dir and must run as root (CAP_SYS_ADMIN): mount failed: ${stderr || String(err)}`);
  }
  mounted = true;
  writeFileSync(filler, Buffer.alloc(2 * 1024 * 1024, 1));
  // 700 KB of text that does not compress: the ConfigMaps that fill the disk.
  writeFileSync(blobFile, Buffer.from(Array.from({ length: 700_000 }, (_, i) => 'abcdefghijklmnopqrstuvwxyz0123456789'[(i * 7919) % 36]).join('')));
});
afterAll(async () => {
  if (skiff && skiff.process.exitCode === null) await skiff.stop();
  if (mounted) execFileSync('umount', [mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
  rmSync(blobDir, { recursive: true, force: true });
});

/** The Status of a failed request made with @kubernetes/client-node, with its HTTP code. */
async function statusOf(request: Promise<unknown>): Promise<{ httpCode: number; status: k8s.V1Status }> {
  const err = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(k8s.ApiException);
  const { code, body } = err as k8s.ApiException<unknown>;
  return { httpCode: code, status: (typeof body === 'string' ? JSON.parse(body) : body) as k8s.V1Status };
}

describe('a full data disk', () => {
  it('refuses writes with a Status naming the cause, keeps reads and watches going, and takes writes again once space is freed', async () => {
    skiff = await startSkiff(['--data-dir', dataDir]);
    const kubectl = new Kubectl(skiff.kubeconfig);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(skiff.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);

    // A watch that must live through the failures.
    const watched: string[] = [];
    let watchEnded: unknown = false;
    const watch = await new k8s.Watch(kc).watch(
      '/api/v1/namespaces/default/configmaps',
      {},
      (type, object: k8s.V1ConfigMap) => watched.push(`${type} ${object.metadata!.name}`),
      (err) => (watchEnded = err ?? true),
    );

    // Fill the disk through kubectl until a create fails.
    const acknowledged = new Map<string, string>();
    let refused: { code: number | null; stderr: string } | undefined;
    for (let n = 0; n < 100 && !refused; n++) {
      const name = `fill-${n}`;
      const result = await kubectl.run(['create', 'configmap', name, `--from-file=blob=${blobFile}`, '-o', 'jsonpath={.metadata.resourceVersion}']);
      if (result.code === 0) acknowledged.set(name, result.stdout);
      else refused = result;
    }
    expect(refused, 'a create failed before 100 ConfigMaps of 700 KB').toBeDefined();
    expect(acknowledged.size).toBeGreaterThan(5);
    const [, message] = /^error: failed to create configmap: (.*)$/.exec(refused!.stderr.trim()) ?? [];
    expect(message, refused!.stderr).toMatch(NO_SPACE);

    // The same through the JavaScript client: a 500 Status, reason InternalError, the same message; nothing stored.
    // (900 KB: more than the failed write left behind for LMDB to reuse, within ConfigMaps' 1 MiB.)
    const big = { metadata: { name: 'too-big' }, data: { blob: 'z'.repeat(900_000) } };
    const { httpCode, status } = await statusOf(core.createNamespacedConfigMap({ namespace: 'default', body: big }));
    expect(httpCode).toBe(500);
    expect(status).toMatchObject({ kind: 'Status', status: 'Failure', code: 500, reason: 'InternalError', message: expect.stringMatching(NO_SPACE) });
    expect((await kubectl.run(['get', 'configmap', 'too-big'])).stderr).toContain('NotFound');

    // Reads keep working, the watch is open and has every acknowledged write, and the server lives on past the
    // second in which it used to die.
    expect(await kubectl.ok('get', 'configmap', 'fill-0', '-o', 'jsonpath={.metadata.resourceVersion}')).toBe(acknowledged.get('fill-0'));
    const listed = await kubectl.json('get', 'configmaps', '--field-selector', 'metadata.name!=kube-root-ca.crt');
    expect(listed.items.map((item: k8s.V1ConfigMap) => item.metadata!.name).sort()).toEqual([...acknowledged.keys()].sort());
    await waitFor(
      'the watch to have every acknowledged ConfigMap',
      () => [...acknowledged.keys()].every((name) => watched.includes(`ADDED ${name}`)),
      CLUSTER_TIMEOUT,
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(skiff.process.exitCode).toBeNull();
    expect(await kubectl.ok('get', '--raw', '/readyz')).toBe('ok');
    expect(watchEnded).toBe(false);
    // The store said so once, as an error naming the code; the next failures are at debug level.
    const storeErrors = skiff
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"component":"@skiff/store"') && line.includes('"level":50'));
    expect(storeErrors.length).toBeGreaterThanOrEqual(1);
    expect(storeErrors[0]).toContain('"code":"SKIFF_ERR_STORE_NO_SPACE"');

    // Space returns: the next write succeeds, without a restart, and the open watch delivers it.
    rmSync(filler);
    const after = await kubectl.ok('create', 'configmap', 'after-space', '--from-literal=ok=yes', '-o', 'jsonpath={.metadata.resourceVersion}');
    acknowledged.set('after-space', after);
    await waitFor('the watch to deliver the write made after space returned', () => watched.includes('ADDED after-space'), CLUSTER_TIMEOUT);
    expect(watchEnded).toBe(false);
    watch.abort();

    // A restart loads every acknowledged object at its resourceVersion, and nothing that was refused.
    expect(await skiff.stop()).toBe(0);
    skiff = await startSkiff(['--data-dir', dataDir]);
    const again = new Kubectl(skiff.kubeconfig);
    const reloaded = await again.json('get', 'configmaps', '--field-selector', 'metadata.name!=kube-root-ca.crt');
    const versions = Object.fromEntries(reloaded.items.map((item: k8s.V1ConfigMap) => [item.metadata!.name, item.metadata!.resourceVersion]));
    expect(versions).toEqual(Object.fromEntries(acknowledged));
    expect(await skiff.stop()).toBe(0);
    kubectl.cleanup();
    again.cleanup();
  });
});
