import { RESOURCES, type LimitRange, type PersistentVolumeClaim, type Pod } from '@skiff/api';
import { startTestCluster, type TestCluster } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, { LIMIT_RANGER_ANNOTATION } from './index.js';
import { aggregate, applyDefaults, claimViolations, effectiveItem, podTotals } from './index.js';

const NS = 'default';

function pod(name: string, containers: Pod['spec']['containers']): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS }, spec: { containers, nodeName: 'nowhere' } } as Pod;
}

describe('LimitRange items', () => {
  it('defaults like the API: default limit from max, default request from the default limit, else the min', () => {
    expect(effectiveItem({ type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' } })).toMatchObject({
      default: { cpu: '2' },
      defaultRequest: { cpu: '2', memory: '64Mi' },
    });
  });

  it('sums a pod: containers added, at least the largest init container, limits only when every container has one', () => {
    const totals = podTotals({
      metadata: { name: 'p' },
      spec: {
        containers: [
          { name: 'a', resources: { requests: { cpu: '250m' }, limits: { cpu: '1' } } },
          { name: 'b', resources: { requests: { cpu: '250m', memory: '1Gi' } } },
        ],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '2' } } }],
      },
    } as Pod);
    expect(totals.requests).toEqual({ cpu: '2', memory: '1Gi' });
    expect(totals.limits).toEqual({});
  });
});

describe('LimitRanger in upstream’s words', () => {
  const range = (limits: LimitRange['spec']['limits']): LimitRange => ({
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'r', namespace: NS },
    spec: { limits },
  });

  it('names containers before init containers in the annotation', () => {
    const target = pod('p', [{ name: 'app', image: 'nginx' }]);
    target.spec.initContainers = [{ name: 'setup', image: 'busybox' }];
    expect(applyDefaults(target, [range([{ type: 'Container', default: { cpu: '1' } }])])).toBe(true);
    expect(target.metadata.annotations?.[LIMIT_RANGER_ANNOTATION]).toBe(
      'LimitRanger plugin set: cpu request for container app; cpu limit for container app; cpu request for init container setup; cpu limit for init container setup',
    );
  });

  it('says each message once, and judges a claim by its requests only', () => {
    expect(aggregate(['a', 'a'])).toBe('a');
    expect(aggregate(['a', 'b', 'a'])).toBe('[a, b]');
    const claim = (resources: NonNullable<PersistentVolumeClaim['spec']>['resources']): PersistentVolumeClaim => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c', namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources },
    });
    const ranges = [range([{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '5Gi' } }])];
    expect(claimViolations(claim({ requests: { storage: '2Gi' }, limits: { storage: '500Mi' } }), ranges)).toEqual([]);
    expect(claimViolations(claim({}), ranges)).toEqual([
      'minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified',
      'maximum storage usage per PersistentVolumeClaim is 5Gi.  No request is specified',
    ]);
  });
});

describe('LimitRanger in a whole cluster (in-process API server over HTTPS)', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ plugins: [plugin] });
    const range: LimitRange = {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'limits', namespace: NS },
      spec: {
        limits: [
          {
            type: 'Container',
            default: { cpu: '500m', memory: '256Mi' },
            defaultRequest: { cpu: '100m' },
            max: { cpu: '1' },
            maxLimitRequestRatio: { cpu: '5' },
          },
          { type: 'Pod', max: { memory: '1Gi' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '5Gi' } },
        ],
      },
    };
    await cluster.client.create(RESOURCES.limitranges, range, NS);
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('gives containers the defaults they do not state, says so in the annotation, and the QoS class follows', async () => {
    const created = await cluster.client.create<Pod>(
      RESOURCES.pods,
      pod('web', [{ name: 'app', image: 'nginx', resources: { limits: { memory: '128Mi' } } }]),
      NS,
    );
    expect(created.spec.containers[0]!.resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '128Mi' } });
    expect(created.metadata.annotations?.[LIMIT_RANGER_ANNOTATION]).toBe('LimitRanger plugin set: cpu request for container app; cpu limit for container app');
    expect(created.status?.qosClass).toBe('Burstable');
  });

  it('refuses a container above the max, and a ratio above the maximum, in upstream words', async () => {
    await expect(
      cluster.client.create(RESOURCES.pods, pod('big', [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } }]), NS),
    ).rejects.toThrow('pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
    await expect(
      cluster.client.create(
        RESOURCES.pods,
        pod('skew', [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' }, limits: { cpu: '800m' } } }]),
        NS,
      ),
    ).rejects.toThrow('pods "skew" is forbidden: cpu max limit to request ratio per Container is 5, but provided ratio is 8.000000');
  });

  it('refuses a pod whose containers together pass the Pod max', async () => {
    const containers = ['a', 'b', 'c'].map((name) => ({ name, image: 'nginx', resources: { limits: { memory: '512Mi' } } }));
    await expect(cluster.client.create(RESOURCES.pods, pod('wide', containers), NS)).rejects.toThrow(
      'pods "wide" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1536Mi',
    );
  });

  it('checks claims against the PersistentVolumeClaim min and max', async () => {
    const claim = (name: string, storage: string): PersistentVolumeClaim => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    });
    await expect(cluster.client.create(RESOURCES.persistentvolumeclaims, claim('small', '500Mi'), NS)).rejects.toThrow(
      'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
    );
    await expect(cluster.client.create(RESOURCES.persistentvolumeclaims, claim('large', '10Gi'), NS)).rejects.toThrow(
      'persistentvolumeclaims "large" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 10Gi',
    );
    await expect(cluster.client.create(RESOURCES.persistentvolumeclaims, claim('fine', '2Gi'), NS)).resolves.toMatchObject({ kind: 'PersistentVolumeClaim' });
  });
});
