import { RESOURCES, type PersistentVolume } from '@skiff/api';
import { SharedInformerFactory } from '@skiff/client';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssumeCache } from './assume-cache.js';

let plane: ControlPlane;
const abort = new AbortController();
let cache: AssumeCache<PersistentVolume>;
let factory: SharedInformerFactory;

beforeAll(async () => {
  plane = await startControlPlane([], { config: { logLevel: 'silent' } });
  factory = new SharedInformerFactory(plane.client);
  cache = new AssumeCache(factory.informer<PersistentVolume>(RESOURCES.persistentvolumes), (volume) => volume.metadata.name!);
  factory.start(abort.signal);
  await factory.waitForSync(abort.signal);
});
afterAll(async () => {
  abort.abort();
  await factory?.stopped();
  await plane?.stop();
});

const make = (name: string): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` } },
});
const cached = (name: string) => waitFor(`${name} in the cache`, async () => cache.getApi(name));
const claimed = (volume: PersistentVolume, claimName: string): PersistentVolume => ({
  ...volume,
  spec: { ...volume.spec, claimRef: { kind: 'PersistentVolumeClaim', namespace: 'ns', name: claimName } },
});

describe('AssumeCache over a real informer', () => {
  it('shows an assumption until it is restored, never through getApi', async () => {
    await plane.client.create(RESOURCES.persistentvolumes, make('a'));
    const original = await cached('a');
    cache.assume(claimed(original, 'mine'));
    expect(cache.get('a')?.spec.claimRef?.name).toBe('mine');
    expect(cache.list().find((volume) => volume.metadata.name === 'a')?.spec.claimRef?.name).toBe('mine');
    expect(cache.getApi('a')?.spec.claimRef).toBeUndefined();
    cache.restore('a');
    expect(cache.get('a')).toBe(original);
  });

  it("lets the API server's newer object win, and refuses to assume over a stale one", async () => {
    await plane.client.create(RESOURCES.persistentvolumes, make('b'));
    const original = await cached('b');
    cache.assume(claimed(original, 'mine'));
    const labelled = await plane.client.update(RESOURCES.persistentvolumes, { ...original, metadata: { ...original.metadata, labels: { x: 'y' } } });
    await waitFor('the update to arrive', async () => cache.getApi('b')?.metadata.resourceVersion === labelled.metadata.resourceVersion);
    expect(cache.get('b')?.spec.claimRef).toBeUndefined();
    expect(cache.get('b')?.metadata.labels).toEqual({ x: 'y' });
    expect(() => cache.assume(claimed(original, 'mine'))).toThrow(/cannot assume b: its resourceVersion \d+ is not the cached \d+/);
    expect(() => cache.assume(make('never-made'))).toThrow('cannot assume never-made: it is not in the cache');
  });
});
