import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type KubeObject } from '@skiff/api';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient, objectKey, SharedInformerFactory, WorkQueue, type SkiffClient } from '@skiff/client';
import { Kernel, recordingLogger, waitFor } from '@skiff/kernel';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import store from '@skiff/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWhenSynced } from './run-when-synced.js';

let dir: string;
let kernel: Kernel;
let client: SkiffClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-cm-synced-'));
  kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, port: 0, logLevel: 'error' } });
  kernel.use(store).use(apiServer, { port: 0 }).use(alwaysAllow);
  await kernel.start();
  client = createLoopbackClient(kernel.resolve('apiHandler'), { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
  for (const name of ['first', 'second'])
    await client.create(RESOURCES.leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'default' }, spec: {} });
});

afterAll(async () => {
  client?.close();
  await kernel?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('runWhenSynced', () => {
  it('starts the workers only once every cache has synced, right after beforeWorkers, and resolves when they exit', async () => {
    const factory = new SharedInformerFactory(client, { resyncMs: 0 });
    const stop = new AbortController();
    const namespaces = factory.informer(RESOURCES.namespaces);
    const leases = factory.informer(RESOURCES.leases);
    const queue = new WorkQueue<string>({ name: 'synced-test' });
    // Handlers fill the queue while the caches are still listing: workers that started early would see that.
    leases.addHandlers({ add: (lease) => queue.add(objectKey(lease)) });
    const heard: string[] = [];
    const cachesFull = () => namespaces.hasSynced() && leases.hasSynced();
    const running = runWhenSynced(
      { signal: stop.signal, logger: recordingLogger() },
      {
        informers: [namespaces, leases],
        queue,
        workers: 2,
        sync: async (key) => void heard.push(`sync ${key} (caches full: ${cachesFull()})`),
        beforeWorkers: () => {
          heard.push(`beforeWorkers (caches full: ${cachesFull()})`);
          for (const namespace of namespaces.list()) if (namespace.metadata.name === 'default') queue.add(objectKey(namespace));
        },
      },
    );
    factory.start(stop.signal);

    await waitFor('beforeWorkers and three synced items', () => heard.length === 4);
    expect(heard[0]).toBe('beforeWorkers (caches full: true)');
    expect(heard.slice(1).sort()).toEqual([
      'sync default (caches full: true)',
      'sync default/first (caches full: true)',
      'sync default/second (caches full: true)',
    ]);

    await client.create(RESOURCES.leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'later', namespace: 'default' }, spec: {} });
    await waitFor('the lease created later, synced', () => heard.includes('sync default/later (caches full: true)'));

    stop.abort();
    await expect(running).resolves.toBeUndefined();
    await factory.stopped();
    expect(heard.filter((line) => line.startsWith('beforeWorkers'))).toHaveLength(1);
  });

  it('stopped while the caches fill: shuts the queue down and resolves quietly, having run nothing', async () => {
    // Never started: its cache stays empty, so the stop comes during the wait.
    const factory = new SharedInformerFactory(client, { resyncMs: 0 });
    const stop = new AbortController();
    const queue = new WorkQueue<string>({ name: 'stopped-test' });
    const ran: string[] = [];
    const running = runWhenSynced(
      { signal: stop.signal, logger: recordingLogger() },
      {
        informers: [factory.informer(RESOURCES.namespaces)],
        queue,
        workers: 1,
        sync: async (key) => void ran.push(key),
        beforeWorkers: () => void ran.push('beforeWorkers'),
      },
    );
    stop.abort();
    await expect(running).resolves.toBeUndefined();
    expect(ran).toEqual([]);
    queue.add('after-stop');
    await expect(queue.get()).resolves.toBeUndefined();
  });

  it('a cache wait that fails while the signal is live: the error reaches the caller, and the queue is shut down', async () => {
    // Real informers only fail their wait on abort; this stands for one that fails otherwise.
    const broken: { waitForSync(): Promise<void> } = { waitForSync: () => Promise.reject(new Error('cache unavailable')) };
    const queue = new WorkQueue<KubeObject>({ name: 'broken-test' });
    const ran: string[] = [];
    const running = runWhenSynced(
      { signal: new AbortController().signal, logger: recordingLogger() },
      { informers: [broken], queue, workers: 1, sync: async () => void ran.push('sync'), beforeWorkers: () => void ran.push('beforeWorkers') },
    );
    await expect(running).rejects.toThrow('cache unavailable');
    expect(ran).toEqual([]);
    await expect(queue.get()).resolves.toBeUndefined();
  });
});
