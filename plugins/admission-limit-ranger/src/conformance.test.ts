import { parseCpuMillis, RESOURCES, type LimitRange, type Pod, type Quantity } from '@skiff/api';
import { startTestCluster, type TestCluster } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from './index.js';

// Upstream's "LimitRange should create a LimitRange with defaults and ensure pod has those defaults applied"
// [Conformance] test, step by step, against a whole cluster over HTTPS.

const NS = 'default';
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ plugins: [plugin] });
}, 60_000);
afterAll(() => cluster?.stop());

const list = (cpu: string, memory: string, storage: string): Record<string, Quantity> =>
  Object.fromEntries(
    [
      ['cpu', cpu],
      ['memory', memory],
      ['ephemeral-storage', storage],
    ].filter(([, value]) => value !== ''),
  );

const testPod = (name: string, requests: Record<string, Quantity>, limits: Record<string, Quantity>): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.9', resources: { requests, limits } }] },
  }) as Pod;

/** Compared as amounts, as the test's equalResourceList does (`Cmp`). */
const amounts = (resources: Record<string, Quantity> | undefined) =>
  Object.fromEntries(Object.entries(resources ?? {}).map(([name, value]) => [name, parseCpuMillis(value)]));

function expectResources(pod: Pod, requests: Record<string, Quantity>, limits: Record<string, Quantity>): void {
  for (const container of pod.spec.containers) {
    expect(amounts(container.resources?.requests)).toEqual(amounts(requests));
    expect(amounts(container.resources?.limits)).toEqual(amounts(limits));
  }
}

describe('LimitRange [Conformance] path', { timeout: 60_000 }, () => {
  it('gives pods the defaults, refuses them outside min and max, and follows updates and deletion at once', async () => {
    const defaultLimit = list('500m', '500Mi', '500Gi');
    const defaultRequest = list('100m', '200Mi', '200Gi');
    const range: LimitRange = {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'limit-range', labels: { time: 'now' } },
      spec: {
        limits: [
          {
            type: 'Container',
            min: list('50m', '100Mi', '100Gi'),
            max: list('500m', '500Mi', '500Gi'),
            default: defaultLimit,
            defaultRequest,
            maxLimitRequestRatio: {},
          },
        ],
      },
    };
    const created = await cluster.client.create<LimitRange>(RESOURCES.limitranges, range, NS);
    expect(created.spec?.limits[0]).toMatchObject({ default: defaultLimit, defaultRequest });

    const bare = await cluster.client.create<Pod>(RESOURCES.pods, testPod('pod-no-resources', {}, {}), NS);
    expectResources(bare, defaultRequest, defaultLimit);

    // A limit with no request asks for the limit (the pod's own defaulting), not the range's default request.
    const partial = await cluster.client.create<Pod>(RESOURCES.pods, testPod('pod-partial-resources', list('', '150Mi', '150Gi'), list('300m', '', '')), NS);
    expectResources(partial, list('300m', '150Mi', '150Gi'), list('300m', '500Mi', '500Gi'));

    await expect(cluster.client.create(RESOURCES.pods, testPod('pfpod', list('10m', '50Mi', '50Gi'), {}), NS)).rejects.toThrow(
      /^pods "pfpod" is forbidden: \[minimum cpu usage per Container is 50m, but request is 10m/,
    );
    // The default limits go below the requests: the pod's own validation refuses it first, as upstream's does.
    await expect(cluster.client.create(RESOURCES.pods, testPod('pfpod', list('600m', '600Mi', '600Gi'), {}), NS)).rejects.toMatchObject({ status: 422 });

    const current = await cluster.client.get<LimitRange>(RESOURCES.limitranges, 'limit-range', NS);
    current.spec!.limits[0]!.min = list('9m', '49Mi', '49Gi');
    await cluster.client.update(RESOURCES.limitranges, current);
    await expect(cluster.client.create(RESOURCES.pods, testPod('pfpod', list('10m', '50Mi', '50Gi'), {}), NS)).resolves.toMatchObject({ kind: 'Pod' });
    await expect(cluster.client.create(RESOURCES.pods, testPod('pfpod2', list('600m', '600Mi', '600Gi'), {}), NS)).rejects.toMatchObject({ status: 422 });

    await cluster.client.delete(RESOURCES.limitranges, 'limit-range', NS, { gracePeriodSeconds: 30 });
    const unbounded = await cluster.client.create<Pod>(RESOURCES.pods, testPod('pfpod2', list('600m', '600Mi', '600Gi'), {}), NS);
    expectResources(unbounded, list('600m', '600Mi', '600Gi'), {});
  });

  it('lists across namespaces, patches (strategic merge) and deletes a LimitRange by collection', async () => {
    const name = 'e2e-limitrange-abcde';
    const range = (): LimitRange => ({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name, labels: { 'e2e-test': name, [name]: 'created' } },
      spec: { limits: [{ type: 'Container', min: list('50m', '100Mi', '100Gi'), max: list('500m', '500Mi', '500Gi') }] },
    });
    await cluster.client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const created = await cluster.client.create<LimitRange>(RESOURCES.limitranges, range(), NS);
    await cluster.client.create(RESOURCES.limitranges, range(), name);
    expect((await cluster.client.list(RESOURCES.limitranges, undefined, { labelSelector: `e2e-test=${name}` })).items).toHaveLength(2);

    const newMin = list('9m', '49Mi', '49Gi');
    const patched = await cluster.client.patch<LimitRange>(
      RESOURCES.limitranges,
      name,
      {
        metadata: { creationTimestamp: created.metadata.creationTimestamp, labels: { [name]: 'patched' } },
        spec: { limits: [{ ...created.spec!.limits[0]!, min: newMin }] },
      },
      { namespace: NS, patchType: 'strategic' },
    );
    expect(patched.metadata.labels?.[name]).toBe('patched');
    expect(amounts(patched.spec!.limits[0]!.min)).toEqual(amounts(newMin));

    await cluster.client.deleteCollection!(RESOURCES.limitranges, NS, { labelSelector: `${name}=patched` });
    expect((await cluster.client.list(RESOURCES.limitranges, NS, { labelSelector: `${name}=patched` })).items).toHaveLength(0);
    expect((await cluster.client.list(RESOURCES.limitranges, undefined, { labelSelector: `e2e-test=${name}` })).items).toHaveLength(1);
  });
});
