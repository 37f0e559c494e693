import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

// pods/ephemeralcontainers and pods/resize change one part of a pod's spec each; the pod itself changes neither.
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const PODS = '/api/v1/namespaces/default/pods';
const STRATEGIC = 'application/strategic-merge-patch+json';

async function createPod(name: string, resources: Record<string, unknown>) {
  const created = await server.request('POST', PODS, {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'busybox', resources }] } },
  });
  expect(created.status).toBe(201);
  return created.json;
}

describe('pods/ephemeralcontainers', () => {
  it('adds a debug container with a patch, as kubectl debug does, and keeps it', async () => {
    await createPod('debugged', {});
    const debugger_ = { name: 'debugger', image: 'busybox', targetContainerName: 'app', stdin: true, tty: true };
    const patched = await server.request('PATCH', `${PODS}/debugged/ephemeralcontainers`, {
      contentType: STRATEGIC,
      body: { spec: { ephemeralContainers: [debugger_], containers: [{ name: 'app', image: 'changed' }] } },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.spec.ephemeralContainers).toMatchObject([{ name: 'debugger', image: 'busybox', targetContainerName: 'app' }]);
    // Only the ephemeral containers changed through the subresource.
    expect(patched.json.spec.containers[0].image).toBe('busybox');
    const read = await server.request('GET', `${PODS}/debugged/ephemeralcontainers`);
    expect(read.status).toBe(200);
    expect(read.json.kind).toBe('Pod');

    const changed = structuredClone(read.json);
    changed.spec.ephemeralContainers[0].image = 'alpine';
    const refused = await server.request('PUT', `${PODS}/debugged/ephemeralcontainers`, { body: changed });
    expect(refused.status).toBe(422);
    expect(refused.json.message).toContain('spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers "debugger" may not be changed');

    const removed = structuredClone(read.json);
    removed.spec.ephemeralContainers = [];
    const refusedRemoval = await server.request('PUT', `${PODS}/debugged/ephemeralcontainers`, { body: removed });
    expect(refusedRemoval.status).toBe(422);
    expect(refusedRemoval.json.message).toContain('existing ephemeral containers "debugger" may not be removed');

    // The pod itself cannot drop (or add) ephemeral containers: they stay as the subresource left them.
    const viaPod = await server.request('PATCH', `${PODS}/debugged`, {
      contentType: 'application/merge-patch+json',
      body: { spec: { ephemeralContainers: null } },
    });
    expect(viaPod.status).toBe(200);
    expect(viaPod.json.spec.ephemeralContainers).toHaveLength(1);
  });

  it('refuses what an ephemeral container may not have, naming the field', async () => {
    await createPod('strict', {});
    const bad = await server.request('PATCH', `${PODS}/strict/ephemeralcontainers`, {
      contentType: STRATEGIC,
      body: {
        spec: {
          ephemeralContainers: [{ name: 'app', image: 'busybox', ports: [{ containerPort: 80 }], targetContainerName: 'nope' }],
        },
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.details.causes.map((c: { field: string; reason: string }) => `${c.field} ${c.reason}`)).toEqual(
      expect.arrayContaining([
        'spec.ephemeralContainers[0].name FieldValueDuplicate',
        'spec.ephemeralContainers[0].ports FieldValueForbidden',
        'spec.ephemeralContainers[0].targetContainerName FieldValueNotFound',
      ]),
    );
  });
});

describe('pods/resize', () => {
  it('changes cpu and memory only, and keeps the QoS class', async () => {
    await createPod('sized', { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } });
    const resized = await server.request('PATCH', `${PODS}/sized/resize`, {
      contentType: STRATEGIC,
      body: { spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m' } } }] } },
    });
    expect(resized.status).toBe(200);
    expect(resized.json.spec.containers[0]).toMatchObject({
      image: 'busybox',
      resources: { requests: { cpu: '150m', memory: '64Mi' }, limits: { cpu: '300m' } },
    });

    const other = await server.request('PATCH', `${PODS}/sized/resize`, {
      contentType: STRATEGIC,
      body: { spec: { containers: [{ name: 'app', resources: { limits: { 'ephemeral-storage': '1Gi' } } }] } },
    });
    expect(other.status).toBe(422);
    expect(other.json.message).toContain('spec.containers[0].resources.limits: Forbidden: only cpu and memory resources are mutable');

    const qos = await server.request('PATCH', `${PODS}/sized/resize`, {
      contentType: STRATEGIC,
      body: { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '300m', memory: '128Mi' } } }] } },
    });
    expect(qos.status).toBe(422);
    expect(qos.json.message).toContain('Pod QOS Class may not change as a result of resizing');

    // Through the pod itself resources stay immutable.
    const viaPod = await server.request('PATCH', `${PODS}/sized`, {
      contentType: STRATEGIC,
      body: { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '120m' } } }] } },
    });
    expect(viaPod.status).toBe(422);
  });

  it('is listed in discovery with get, patch and update', async () => {
    const discovery = await server.request('GET', '/api/v1');
    const names = discovery.json.resources.map((r: { name: string; verbs: string[] }) => `${r.name} ${r.verbs.join(',')}`);
    expect(names).toEqual(expect.arrayContaining(['pods/resize get,patch,update', 'pods/ephemeralcontainers get,patch,update']));
  });
});
