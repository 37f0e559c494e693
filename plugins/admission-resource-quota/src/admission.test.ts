import type { ConfigMap, KubeObject, ResourceQuota } from '@skiff/api';
import type { AdmissionOutcome, AdmissionRequest, Logger } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import { QuotaAdmission } from './admission.js';

/** A namespace's objects by collection, and the quota status writes made, in memory. */
function fakeNamespace(quota: ResourceQuota) {
  const stored = new Map<string, KubeObject[]>([
    ['/resourcequotas', [quota]],
    ['/configmaps', []],
  ]);
  let revision = 10;
  const writes: ResourceQuota[] = [];
  const admission = new QuotaAdmission({
    list: async (collection) => structuredClone(stored.get(`${collection.group}/${collection.resource}`) ?? []),
    async writeStatus(next) {
      const current = stored.get('/resourcequotas')![0]!;
      if (current.metadata.resourceVersion !== next.metadata.resourceVersion) throw Object.assign(new Error('conflict'), { status: { reason: 'Conflict' } });
      const written = { ...next, metadata: { ...next.metadata, resourceVersion: String(++revision) } };
      stored.set('/resourcequotas', [written]);
      writes.push(written);
      return written;
    },
    isOwnWrite: () => false,
    logger: { warn: () => undefined } as unknown as Logger,
  });
  return { stored, writes, admission, quota: () => stored.get('/resourcequotas')![0] as ResourceQuota };
}

function createRequest(name: string, finishers: ((outcome: AdmissionOutcome) => void)[]): AdmissionRequest {
  const object: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion: undefined } };
  return {
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    namespace: 'ns',
    name,
    object,
    user: { username: 'alice', groups: [] },
    dryRun: false,
    get: async () => undefined,
    onFinished: (callback) => finishers.push(callback),
    warnings: [],
  };
}

const QUOTA: ResourceQuota = {
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'q', namespace: 'ns', resourceVersion: '1' },
  spec: { hard: { configmaps: '2' } },
  status: { hard: { configmaps: '2' }, used: { configmaps: '0' } },
};

describe('QuotaAdmission', () => {
  it('a recount written while a charged create is still in flight keeps its charge', async () => {
    const ns = fakeNamespace(structuredClone(QUOTA));
    const finishers: ((outcome: AdmissionOutcome) => void)[] = [];
    await ns.admission.admit(createRequest('a', finishers));
    expect(ns.quota().status?.used).toEqual({ configmaps: '1' });

    // A controller that has not seen "a" yet (nothing is stored) writes used=0: the API server counts it in.
    const recount: ResourceQuota = { ...ns.quota(), status: { hard: { configmaps: '2' }, used: { configmaps: '0' } } };
    const recountFinishers: ((outcome: AdmissionOutcome) => void)[] = [];
    await ns.admission.quotaWrite({
      ...createRequest('q', recountFinishers),
      operation: 'UPDATE',
      subresource: 'status',
      resource: { group: '', version: 'v1', resource: 'resourcequotas' },
      object: recount,
    });
    expect(recount.status?.used).toEqual({ configmaps: '1' });
    recountFinishers.forEach((finish) => finish({ succeeded: true }));

    // Stored now: the recount finds it in the store and not twice.
    ns.stored.set('/configmaps', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '12' } }]);
    const again: ResourceQuota = { ...ns.quota(), status: { used: { configmaps: '0' } } };
    await ns.admission.quotaWrite({
      ...createRequest('q', []),
      operation: 'UPDATE',
      subresource: 'status',
      resource: { group: '', version: 'v1', resource: 'resourcequotas' },
      object: again,
      onFinished: undefined,
    });
    expect(again.status?.used).toEqual({ configmaps: '1' });
  });

  it('a quota write of another writer holds the namespace until it is answered; charges wait for it', async () => {
    const ns = fakeNamespace(structuredClone(QUOTA));
    const held: ((outcome: AdmissionOutcome) => void)[] = [];
    const update = { ...ns.quota(), spec: { hard: { configmaps: '1' } } };
    await ns.admission.quotaWrite({
      ...createRequest('q', held),
      operation: 'UPDATE',
      resource: { group: '', version: 'v1', resource: 'resourcequotas' },
      object: update,
    });
    let admitted = false;
    const charge = ns.admission.admit(createRequest('b', [])).then(() => (admitted = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(admitted).toBe(false);
    // The spec change is stored, then answered: the charge goes on against the new limit.
    ns.stored.set('/resourcequotas', [{ ...update, metadata: { ...update.metadata, resourceVersion: '50' } }]);
    held.forEach((finish) => finish({ succeeded: true }));
    await charge;
    expect(ns.quota().status?.used).toEqual({ configmaps: '1' });
    await expect(ns.admission.admit(createRequest('c', []))).rejects.toThrow(
      'configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=1, limited: configmaps=1',
    );
  });

  it('gives the charge back when the create fails after admission, or stored another name', async () => {
    const ns = fakeNamespace(structuredClone(QUOTA));
    const finishers: ((outcome: AdmissionOutcome) => void)[] = [];
    await ns.admission.admit(createRequest('a', finishers));
    await ns.admission.admit(createRequest('b', finishers));
    expect(ns.quota().status?.used).toEqual({ configmaps: '2' });
    finishers[0]!({ succeeded: false });
    finishers[1]!({ succeeded: true, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b-retried' } } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ns.quota().status?.used).toEqual({ configmaps: '0' });
  });
});
