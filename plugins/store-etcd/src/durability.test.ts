import { randomBytes } from 'node:crypto';
import type { KubeObject } from '@skiff/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEtcdStore } from './etcd-store.js';
import { EtcdCluster } from './testing.js';

let etcd: EtcdCluster;

beforeAll(async () => {
  etcd = await EtcdCluster.start(3);
}, 60_000);

afterAll(async () => {
  await etcd?.stop();
});

function configMap(name: string, namespace: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { written: name } };
}

describe('the etcd store on three members', () => {
  it('loses no acknowledged write when the leader is killed with SIGKILL during writes', async () => {
    const namespace = `ns-${randomBytes(4).toString('hex')}`;
    const store = await openEtcdStore({ endpoints: etcd.endpoints, compactionIntervalMs: 0, retryForMs: 20_000 });
    const acknowledged: string[] = [];
    let failed = 0;
    let stop = false;
    // Four writers at once, each creating keys until told to stop.
    const writer = async (id: number) => {
      for (let i = 0; !stop; i++) {
        const key = `/registry/configmaps/${namespace}/w${id}-${i}`;
        try {
          await store.create(key, configMap(`w${id}-${i}`, namespace));
          acknowledged.push(key);
        } catch {
          failed++;
        }
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 20));
    const leader = await etcd.leader();
    await etcd.kill(leader);
    const atKill = acknowledged.length;
    // Writing goes on through the surviving two (a new leader is elected).
    while (acknowledged.length < atKill + 200) await new Promise((resolve) => setTimeout(resolve, 20));
    stop = true;
    await Promise.all(writers);
    await store.close();

    const survivors = etcd.endpoints.filter((_, index) => index !== leader);
    const reader = await openEtcdStore({ endpoints: survivors, compactionIntervalMs: 0 });
    const stored = new Set((await reader.list(`/registry/configmaps/${namespace}/`)).items.map((item) => item.key));
    expect(acknowledged.filter((key) => !stored.has(key))).toEqual([]);
    await reader.close();

    // The killed member comes back on its data and catches up: it has every acknowledged write too.
    await etcd.restart(leader);
    const back = await openEtcdStore({ endpoints: [etcd.endpoint(leader)], compactionIntervalMs: 0 });
    const onIt = new Set((await back.list(`/registry/configmaps/${namespace}/`)).items.map((item) => item.key));
    expect(acknowledged.filter((key) => !onIt.has(key))).toEqual([]);
    await back.close();
    expect(failed).toBeLessThan(acknowledged.length);
  }, 120_000);
});
