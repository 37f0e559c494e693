import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

const deployment = (name: string, replicas = 2) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
  },
});

describe('bootstrap', () => {
  it('creates the system namespaces', async () => {
    const { json } = await server.request('GET', '/api/v1/namespaces');
    expect(json.items.map((item: any) => item.metadata.name).sort()).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    expect(json.kind).toBe('NamespaceList');
  });
});

describe('list', () => {
  beforeAll(async () => {
    await server.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'other' } } });
    for (const [name, labels] of [
      ['a1', { app: 'a', tier: 'web' }],
      ['a2', { app: 'a', tier: 'db' }],
      ['b1', { app: 'b' }],
    ] as const)
      await server.request('POST', PODS, { body: pod(name, { metadata: { labels } }) });
    await server.request('POST', '/api/v1/namespaces/other/pods', { body: pod('o1', { metadata: { labels: { app: 'a' } }, spec: { nodeName: 'node-1' } }) });
  });

  const names = (json: any) => json.items.map((item: any) => item.metadata.name).sort();

  it('filters by label selector and field selector', async () => {
    expect(names((await server.request('GET', `${PODS}?labelSelector=app%3Da`)).json)).toEqual(['a1', 'a2']);
    expect(names((await server.request('GET', `${PODS}?labelSelector=app%3Da,tier!%3Ddb`)).json)).toEqual(['a1']);
    expect(names((await server.request('GET', `${PODS}?labelSelector=${encodeURIComponent('tier in (web,db)')}`)).json)).toEqual(['a1', 'a2']);
    expect(names((await server.request('GET', `${PODS}?fieldSelector=metadata.name%3Db1`)).json)).toEqual(['b1']);
    expect(names((await server.request('GET', `/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1`)).json)).toEqual(['o1']);
    expect(names((await server.request('GET', `${PODS}?fieldSelector=spec.nodeName%3D,metadata.namespace%3Ddefault`)).json)).toEqual(['a1', 'a2', 'b1']);
    const unsupported = await server.request('GET', `${PODS}?fieldSelector=spec.bogus%3Dx`);
    expect(unsupported.status).toBe(400);
    expect(unsupported.json.message).toBe('field label not supported: spec.bogus');
    expect((await server.request('GET', `${PODS}?labelSelector=${encodeURIComponent('a in (')}`)).status).toBe(400);
  });

  it('lists across namespaces and reports the list resourceVersion', async () => {
    const all = await server.request('GET', '/api/v1/pods?labelSelector=app%3Da');
    expect(names(all.json)).toEqual(['a1', 'a2', 'o1']);
    expect(Number(all.json.metadata.resourceVersion)).toBe(server.store.revision());
  });

  it('pages with limit and continue', async () => {
    const first = await server.request('GET', `${PODS}?limit=2&labelSelector=app`);
    expect(first.json.items).toHaveLength(2);
    expect(first.json.metadata.continue).toBeTruthy();
    const second = await server.request('GET', `${PODS}?limit=2&labelSelector=app&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect([...names(first.json), ...names(second.json)]).toEqual(['a1', 'a2', 'b1']);
    expect(second.json.metadata.continue).toBeUndefined();
    expect((await server.request('GET', `${PODS}?limit=2&continue=garbage`)).status).toBe(400);
  });
});

describe('update', () => {
  it('bumps generation only when the spec changes, keeps status, and refuses stale resourceVersions', async () => {
    const created = (await server.request('POST', DEPLOYMENTS, { body: deployment('gen') })).json;
    const labelled = { ...created, metadata: { ...created.metadata, labels: { app: 'gen', extra: 'x' } }, status: { replicas: 99 } };
    const first = await server.request('PUT', `${DEPLOYMENTS}/gen`, { body: labelled });
    expect(first.status).toBe(200);
    expect(first.json.metadata.generation).toBe(1);
    expect(first.json.status).toBeUndefined();
    const scaled = { ...first.json, spec: { ...first.json.spec, replicas: 5 } };
    const second = await server.request('PUT', `${DEPLOYMENTS}/gen`, { body: scaled });
    expect(second.json.metadata.generation).toBe(2);
    expect(second.json.metadata.uid).toBe(created.metadata.uid);
    const stale = await server.request('PUT', `${DEPLOYMENTS}/gen`, { body: scaled });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on deployments.apps "gen": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('writes nothing for an update that changes nothing', async () => {
    const created = (await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'same' }, data: { a: '1' } } })).json;
    const again = await server.request('PUT', '/api/v1/namespaces/default/configmaps/same', { body: created });
    expect(again.json.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('rejects a body naming another object', async () => {
    const response = await server.request('PUT', `${PODS}/a1`, { body: pod('zzz') });
    expect(response.status).toBe(400);
    expect(response.json.message).toBe('the name of the object (zzz) does not match the name on the URL (a1)');
  });

  it('updates the status and metadata, never the spec, through the status subresource', async () => {
    const current = (await server.request('GET', `${PODS}/a1`)).json;
    const response = await server.request('PUT', `${PODS}/a1/status`, {
      body: {
        ...current,
        metadata: { ...current.metadata, labels: { ...current.metadata.labels, relabelled: 'yes' } },
        spec: { containers: [] },
        status: { phase: 'Running' },
      },
    });
    expect(response.status).toBe(200);
    expect(response.json.status.phase).toBe('Running');
    expect(response.json.metadata.labels).toEqual({ ...current.metadata.labels, relabelled: 'yes' });
    expect(response.json.spec).toEqual(current.spec);
    const patched = await server.request('PATCH', `${PODS}/a1/status`, {
      body: { status: { podIP: '10.0.0.9' } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.json.status).toEqual({ phase: 'Running', podIP: '10.0.0.9' });
    expect((await server.request('GET', `${PODS}/a1/status`)).json.status.podIP).toBe('10.0.0.9');
  });
});

describe('patch', () => {
  it('applies merge, strategic merge and JSON patches', async () => {
    await server.request('POST', DEPLOYMENTS, { body: deployment('p') });
    const merge = await server.request('PATCH', `${DEPLOYMENTS}/p`, {
      body: { metadata: { labels: { env: 'prod' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(merge.json.metadata.labels).toEqual({ app: 'p', env: 'prod' });
    expect(merge.json.metadata.generation).toBe(1);
    const strategic = await server.request('PATCH', `${DEPLOYMENTS}/p`, {
      body: {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'web' }, { name: 'side' }],
              containers: [
                { name: 'web', image: 'nginx:1.25' },
                { name: 'side', image: 'busybox' },
              ],
            },
          },
        },
      },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(strategic.status).toBe(200);
    expect(strategic.json.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`)).toEqual(['web=nginx:1.25', 'side=busybox']);
    expect(strategic.json.metadata.generation).toBe(2);
    const json = await server.request('PATCH', `${DEPLOYMENTS}/p`, {
      body: [{ op: 'replace', path: '/spec/replicas', value: 7 }],
      contentType: 'application/json-patch+json',
    });
    expect(json.json.spec.replicas).toBe(7);
    const failing = await server.request('PATCH', `${DEPLOYMENTS}/p`, {
      body: [{ op: 'test', path: '/spec/replicas', value: 1 }],
      contentType: 'application/json-patch+json',
    });
    expect(failing.status).toBeGreaterThanOrEqual(400);
    expect(failing.json.kind).toBe('Status');
    const missing = await server.request('PATCH', `${DEPLOYMENTS}/nope`, { body: { spec: {} }, contentType: 'application/merge-patch+json' });
    expect(missing.status).toBe(404);
    const pinned = await server.request('PATCH', `${DEPLOYMENTS}/p`, {
      body: { metadata: { resourceVersion: '1' }, spec: { replicas: 1 } },
      contentType: 'application/merge-patch+json',
    });
    expect(pinned.status).toBe(409);
  });

  it('creates on server-side apply (201), updates after (200), and records the field manager', async () => {
    const manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', labels: { a: 'b' } }, data: { key: 'one' } };
    const created = await server.request('PATCH', '/api/v1/namespaces/default/configmaps/applied?fieldManager=kubectl&force=false', {
      body: JSON.stringify(manifest),
      contentType: 'application/apply-patch+yaml',
    });
    expect(created.status).toBe(201);
    expect(created.json.metadata.managedFields).toEqual([
      expect.objectContaining({
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:a': {} } }, 'f:data': { 'f:key': {} } },
      }),
    ]);
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  key: two\n';
    const updated = await server.request('PATCH', '/api/v1/namespaces/default/configmaps/applied?fieldManager=kubectl', {
      body: yaml,
      contentType: 'application/apply-patch+yaml',
    });
    expect(updated.status).toBe(200);
    expect(updated.json.data.key).toBe('two');
    expect(updated.json.metadata.managedFields).toHaveLength(1);
    const anonymous = await server.request('PATCH', '/api/v1/namespaces/default/configmaps/applied', {
      body: yaml,
      contentType: 'application/apply-patch+yaml',
    });
    expect(anonymous.status).toBe(400);
  });

  it('answers 415 for unknown patch types', async () => {
    const response = await server.request('PATCH', `${PODS}/a1`, { body: {}, contentType: 'application/json' });
    expect(response.status).toBe(415);
  });
});

describe('delete', () => {
  it('deletes at once and returns the object', async () => {
    await server.request('POST', PODS, { body: pod('gone') });
    const response = await server.request('DELETE', `${PODS}/gone`, { body: { propagationPolicy: 'Background' } });
    expect(response.status).toBe(200);
    expect(response.json.metadata.name).toBe('gone');
    expect((await server.request('GET', `${PODS}/gone`)).status).toBe(404);
    expect((await server.request('DELETE', `${PODS}/gone`)).status).toBe(404);
  });

  it('deletes a pod bound to a node gracefully, and finishes with a grace-0 delete', async () => {
    await server.request('POST', PODS, { body: pod('graceful', { spec: { nodeName: 'node-1', terminationGracePeriodSeconds: 20 } }) });
    const before = Date.now();
    const marked = await server.request('DELETE', `${PODS}/graceful`, { body: { propagationPolicy: 'Background' } });
    expect(marked.status).toBe(200);
    expect(marked.json.metadata.deletionGracePeriodSeconds).toBe(20);
    const due = Date.parse(marked.json.metadata.deletionTimestamp);
    expect(due).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 19_000);
    expect((await server.request('GET', `${PODS}/graceful`)).status).toBe(200);
    const finished = await server.request('DELETE', `${PODS}/graceful?gracePeriodSeconds=0`);
    expect(finished.status).toBe(200);
    expect((await server.request('GET', `${PODS}/graceful`)).status).toBe(404);
  });

  it('keeps objects with finalizers until an update empties them', async () => {
    await server.request('POST', PODS, { body: pod('held', { metadata: { finalizers: ['example.com/hold'] } }) });
    const marked = await server.request('DELETE', `${PODS}/held`);
    expect(marked.json.metadata.deletionTimestamp).toBeTruthy();
    expect(marked.json.metadata.deletionGracePeriodSeconds).toBe(0);
    const current = (await server.request('GET', `${PODS}/held`)).json;
    const released = await server.request('PUT', `${PODS}/held`, { body: { ...current, metadata: { ...current.metadata, finalizers: [] } } });
    expect(released.status).toBe(200);
    expect((await server.request('GET', `${PODS}/held`)).status).toBe(404);
  });

  it('adds the foregroundDeletion or orphan finalizer for those propagation policies', async () => {
    await server.request('POST', DEPLOYMENTS, { body: deployment('fg') });
    const foreground = await server.request('DELETE', `${DEPLOYMENTS}/fg`, { body: { propagationPolicy: 'Foreground' } });
    expect(foreground.json.metadata.finalizers).toEqual(['foregroundDeletion']);
    await server.request('POST', DEPLOYMENTS, { body: deployment('orph') });
    const orphan = await server.request('DELETE', `${DEPLOYMENTS}/orph?propagationPolicy=Orphan`);
    expect(orphan.json.metadata.finalizers).toEqual(['orphan']);
    expect((await server.request('DELETE', `${DEPLOYMENTS}/orph`, { body: { propagationPolicy: 'Sideways' } })).status).toBe(400);
  });

  it('checks delete preconditions', async () => {
    await server.request('POST', PODS, { body: pod('pre') });
    const response = await server.request('DELETE', `${PODS}/pre`, { body: { preconditions: { uid: 'someone-else' } } });
    expect(response.status).toBe(409);
    expect(response.json.message).toContain('Precondition failed: UID in precondition: someone-else');
  });

  it('deletes a collection by selector', async () => {
    for (const name of ['c1', 'c2', 'c3'])
      await server.request('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name, labels: { batch: name === 'c3' ? 'keep' : 'drop' } } },
      });
    const response = await server.request('DELETE', '/api/v1/namespaces/default/configmaps?labelSelector=batch%3Ddrop');
    expect(response.status).toBe(200);
    expect(response.json.items.map((item: any) => item.metadata.name).sort()).toEqual(['c1', 'c2']);
    const left = (await server.request('GET', '/api/v1/namespaces/default/configmaps?labelSelector=batch')).json;
    expect(left.items.map((item: any) => item.metadata.name)).toEqual(['c3']);
  });
});

describe('subresources', () => {
  it('serves scale for deployments: GET, merge PATCH and PUT', async () => {
    await server.request('POST', DEPLOYMENTS, { body: deployment('sc', 3) });
    const scale = await server.request('GET', `${DEPLOYMENTS}/sc/scale`);
    expect(scale.json).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'sc', namespace: 'default' },
      spec: { replicas: 3 },
      status: { replicas: 0, selector: 'app=sc' },
    });
    const patched = await server.request('PATCH', `${DEPLOYMENTS}/sc/scale`, { body: { spec: { replicas: 5 } }, contentType: 'application/merge-patch+json' });
    expect(patched.json.spec.replicas).toBe(5);
    const deploymentNow = (await server.request('GET', `${DEPLOYMENTS}/sc`)).json;
    expect(deploymentNow.spec.replicas).toBe(5);
    expect(deploymentNow.metadata.generation).toBe(2);
    const put = await server.request('PUT', `${DEPLOYMENTS}/sc/scale`, { body: { ...patched.json, spec: { replicas: 1 } } });
    expect(put.json.spec.replicas).toBe(1);
    const stale = await server.request('PUT', `${DEPLOYMENTS}/sc/scale`, { body: { ...patched.json, spec: { replicas: 2 } } });
    expect(stale.status).toBe(409);
    const negative = await server.request('PUT', `${DEPLOYMENTS}/sc/scale`, { body: { kind: 'Scale', metadata: { name: 'sc' }, spec: { replicas: -1 } } });
    expect(negative.status).toBe(422);
    expect((await server.request('GET', `${PODS}/a1/scale`)).status).toBe(404);
  });

  it('binds a pod once: 201, then 409', async () => {
    await server.request('POST', PODS, { body: pod('unbound') });
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'unbound' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-7' } };
    const bound = await server.request('POST', `${PODS}/unbound/binding`, { body: binding });
    expect(bound.status).toBe(201);
    expect(bound.json).toMatchObject({ kind: 'Status', status: 'Success' });
    const podNow = (await server.request('GET', `${PODS}/unbound`)).json;
    expect(podNow.spec.nodeName).toBe('node-7');
    expect(podNow.status.conditions).toEqual([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]);
    const again = await server.request('POST', `${PODS}/unbound/binding`, { body: binding });
    expect(again.status).toBe(409);
    expect(again.json.message).toContain('is already assigned to node "node-7"');
  });

  it('evicts a pod: 201 and the pod is deleted', async () => {
    await server.request('POST', PODS, { body: pod('evicted') });
    const response = await server.request('POST', `${PODS}/evicted/eviction`, {
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'evicted', namespace: 'default' }, deleteOptions: {} },
    });
    expect(response.status).toBe(201);
    expect((await server.request('GET', `${PODS}/evicted`)).status).toBe(404);
  });

  it('answers 404 for subresources a kind does not have and 405 for verbs it does not allow', async () => {
    expect((await server.request('GET', '/api/v1/namespaces/default/configmaps/same/status')).status).toBe(404);
    expect((await server.request('DELETE', `${PODS}/a1/status`)).status).toBe(405);
  });
});

describe('namespaces', () => {
  it('terminates a namespace with spec.finalizers until they are finalized away', async () => {
    await server.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'doomed' }, spec: { finalizers: ['kubernetes'] } } });
    const marked = await server.request('DELETE', '/api/v1/namespaces/doomed');
    expect(marked.json.status.phase).toBe('Terminating');
    const current = (await server.request('GET', '/api/v1/namespaces/doomed')).json;
    const finalized = await server.request('PUT', '/api/v1/namespaces/doomed/finalize', { body: { ...current, spec: { finalizers: [] } } });
    expect(finalized.status).toBe(200);
    expect((await server.request('GET', '/api/v1/namespaces/doomed')).status).toBe(404);
  });
});
