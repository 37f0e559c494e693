import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { CLUSTER_TIMEOUT, Kubectl, pods, startSkiff, tempDir, waitFor } from './harness.js';

const dataDir = tempDir('restart');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('restart with the same data dir', () => {
  it('keeps every object, and pods are Running again with their IPs', async () => {
    const first = await startSkiff(['--data-dir', dataDir]);
    const kubectl = new Kubectl(first.kubeconfig);
    await kubectl.ok('create', 'namespace', 'shop');
    await kubectl.ok('create', 'deployment', 'cart', '--image=nginx', '--replicas=2', '-n', 'shop');
    await kubectl.ok('run', 'solo', '--image=busybox', '--labels=keep=me');
    await waitFor(
      '3 Running pods',
      async () => {
        const all = [...(await pods(kubectl)), ...(await kubectl.json('get', 'pods', '-n', 'shop')).items.map((p: any) => ({ phase: p.status?.phase }))];
        return all.filter((p) => p.phase === 'Running').length === 3;
      },
      CLUSTER_TIMEOUT,
    );
    const before = await kubectl.json('get', 'pods', '-A');
    expect(await first.stop()).toBe(0);

    const second = await startSkiff(['--data-dir', dataDir]);
    try {
      const again = new Kubectl(second.kubeconfig);
      expect(await again.ok('get', 'namespace', 'shop', '-o', 'name')).toBe('namespace/shop\n');
      expect(await again.ok('get', 'deployment', 'cart', '-n', 'shop', '-o', 'name')).toBe('deployment.apps/cart\n');
      const after = await waitFor(
        'all pods Running after restart',
        async () => {
          const list = await again.json('get', 'pods', '-A');
          return list.items.length === before.items.length && list.items.every((p: any) => p.status?.phase === 'Running') && list;
        },
        CLUSTER_TIMEOUT,
      );
      const byName = (l: any) => Object.fromEntries(l.items.map((p: any) => [p.metadata.name, p]));
      const [b, a] = [byName(before), byName(after)];
      expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
      for (const name of Object.keys(b)) {
        expect(a[name].metadata.uid).toBe(b[name].metadata.uid);
        expect(a[name].status.podIP).toBe(b[name].status.podIP);
      }
      again.cleanup();
    } finally {
      expect(await second.stop()).toBe(0);
      kubectl.cleanup();
    }
  });
});
