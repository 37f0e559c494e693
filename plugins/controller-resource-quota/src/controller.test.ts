import { RESOURCES, type ConfigMap, type Pod, type ResourceQuota } from '@skiff/api';
import { waitFor } from '@skiff/kernel';
import admission from '@skiff/plugin-admission-resource-quota';
import { startTestCluster, type TestCluster } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from './index.js';

const NS = 'default';
const configMap = (name: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS } });
const quota = (name: string, hard: Record<string, string>): ResourceQuota => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name, namespace: NS },
  spec: { hard },
});

describe('the ResourceQuota controller alone (no quota admission)', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ plugins: [[plugin, { resyncIntervalMs: 1000 }]] });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('fills status.hard and status.used, follows creates and deletes, and counts again when the spec changes', async () => {
    const used = async () => (await cluster.client.get<ResourceQuota>(RESOURCES.resourcequotas, 'q', NS)).status;
    await cluster.client.create(RESOURCES.configmaps, configMap('one'), NS);
    await cluster.client.create(RESOURCES.resourcequotas, quota('q', { 'count/configmaps': '10' }), NS);
    const initial = await waitFor('the first count', async () => (await used())?.used?.['count/configmaps']);
    await cluster.client.create(RESOURCES.configmaps, configMap('two'), NS);
    await waitFor('the create counted', async () => (await used())?.used?.['count/configmaps'] === String(Number(initial) + 1));
    await cluster.client.delete(RESOURCES.configmaps, 'one', NS);
    await cluster.client.delete(RESOURCES.configmaps, 'two', NS);
    await waitFor('the deletes counted', async () => (await used())?.used?.['count/configmaps'] === String(Number(initial) - 1));

    const current = await cluster.client.get<ResourceQuota>(RESOURCES.resourcequotas, 'q', NS);
    await cluster.client.update(RESOURCES.resourcequotas, { ...current, spec: { hard: { 'count/configmaps': '10', pods: '4' } } });
    await waitFor('the new key counted', async () => {
      const status = await used();
      return status?.hard?.pods === '4' && status.used?.pods === '0';
    });
  });

  it('gives a finished pod back its compute resources', async () => {
    await cluster.client.create(RESOURCES.resourcequotas, quota('compute', { pods: '5', 'requests.cpu': '4' }), NS);
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'job', namespace: NS },
      spec: { nodeName: 'nowhere', containers: [{ name: 'a', image: 'busybox', resources: { requests: { cpu: '1' } } }] },
    } as Pod;
    await cluster.client.create(RESOURCES.pods, pod, NS);
    const compute = async () => (await cluster.client.get<ResourceQuota>(RESOURCES.resourcequotas, 'compute', NS)).status?.used;
    await waitFor('the pod counted', async () => (await compute())?.['requests.cpu'] === '1');
    const stored = await cluster.client.get<Pod>(RESOURCES.pods, 'job', NS);
    await cluster.client.updateStatus(RESOURCES.pods, { ...stored, status: { ...stored.status, phase: 'Succeeded' } });
    await waitFor('the finished pod given back', async () => {
      const now = await compute();
      return now?.['requests.cpu'] === '0' && now.pods === '0';
    });
  });
});

describe('the controller with quota admission', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ plugins: [admission, [plugin, { resyncIntervalMs: 1000 }]] });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('a recount never lowers status.used below what is admitted, through bursts and deletes', async () => {
    await cluster.client.create(RESOURCES.resourcequotas, quota('q', { configmaps: '40' }), NS);
    for (let round = 0; round < 3; round++) {
      const results = await Promise.allSettled(
        Array.from({ length: 80 }, (_, i) => cluster.client.create(RESOURCES.configmaps, configMap(`r${round}-${i}`), NS)),
      );
      expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(round === 0 ? 1 : 10);
      const stored = (await cluster.client.list(RESOURCES.configmaps, NS)).items;
      expect(stored.length).toBe(40);
      // Free ten, and wait for the controller to count them.
      const freed = stored.filter((c) => c.metadata.name !== 'kube-root-ca.crt').slice(0, 10);
      await Promise.all(freed.map((c) => cluster.client.delete(RESOURCES.configmaps, c.metadata.name!, NS)));
      await waitFor(
        'the deletes counted',
        async () => (await cluster.client.get<ResourceQuota>(RESOURCES.resourcequotas, 'q', NS)).status?.used?.configmaps === '30',
      );
    }
  });
});

describe('the ResourceQuota controller with a long resync', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ plugins: [[plugin, { resyncIntervalMs: 600_000 }]] });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('gives back a count of any built-in collection as soon as one is deleted (count/replicasets.apps)', async () => {
    const used = async () => (await cluster.client.get<ResourceQuota>(RESOURCES.resourcequotas, 'rs', NS)).status?.used?.['count/replicasets.apps'];
    await cluster.client.create(RESOURCES.resourcequotas, quota('rs', { 'count/replicasets.apps': '5' }), NS);
    await waitFor('the first count', async () => (await used()) === '0');
    const replicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web', namespace: NS },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
      },
    };
    await cluster.client.create(RESOURCES.replicasets, replicaSet, NS);
    await waitFor('the create counted', async () => (await used()) === '1', { timeoutMs: 10_000 });
    await cluster.client.delete(RESOURCES.replicasets, 'web', NS);
    await waitFor('the delete counted', async () => (await used()) === '0', { timeoutMs: 10_000 });
  });
});
