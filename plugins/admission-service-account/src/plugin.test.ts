import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError, RESOURCES, type ApiError, type Namespace, type Pod } from '@skiff/api';
import serviceAccountController from '@skiff/plugin-controller-serviceaccount';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import plugin from './index.js';
import type { ServiceAccount } from '@skiff/api';

const MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

const pod = (name: string, spec: Record<string, unknown> = {}): Pod =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec } }) as Pod;

const failure = (promise: Promise<unknown>): Promise<ApiError> =>
  promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (err: unknown) => {
      if (!isApiError(err)) throw err;
      return err;
    },
  );

describe('service account admission in a control plane with the ServiceAccount controller', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([serviceAccountController, plugin]);
    await waitFor('the default ServiceAccount of default', () => plane.client.get(RESOURCES.serviceaccounts, 'default', 'default'));
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('stores a pod with serviceAccountName default and a kube-api-access volume that passes pod validation', async () => {
    const created = await plane.client.create(RESOURCES.pods, pod('web', { initContainers: [{ name: 'init', image: 'busybox' }] }), 'default');
    const stored = await plane.client.get<Pod>(RESOURCES.pods, 'web', 'default');
    expect(stored.spec).toEqual(created.spec);
    expect(stored.spec).toMatchObject({ serviceAccountName: 'default', serviceAccount: 'default' });
    const volumes = stored.spec.volumes as { name: string; projected?: { sources: unknown[]; defaultMode: number } }[];
    expect(volumes).toHaveLength(1);
    expect(volumes[0]!.name).toMatch(/^kube-api-access-[a-z0-9]{5}$/);
    expect(volumes[0]!.projected).toMatchObject({ defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, {}, {}] });
    for (const container of [...stored.spec.initContainers!, ...stored.spec.containers])
      expect(container.volumeMounts).toEqual([{ name: volumes[0]!.name, mountPath: MOUNT_PATH, readOnly: true }]);
  });

  it('admits a pod sent right behind its new namespace, once the controller made the default ServiceAccount', async () => {
    await plane.client.create<Namespace>(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh' } });
    const created = await plane.client.create(RESOURCES.pods, pod('early'), 'fresh');
    expect(created.spec).toMatchObject({ serviceAccountName: 'default' });
  });

  it('refuses a pod naming a ServiceAccount that does not exist, with 403 and upstream wording', async () => {
    const err = await failure(plane.client.create(RESOURCES.pods, pod('robot', { serviceAccountName: 'robot' }), 'default'));
    expect(err.status).toBe(403);
    expect(err.reason).toBe('Forbidden');
    expect(err.message).toBe('pods "robot" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found');
  });

  it("leaves the token out when the ServiceAccount opts out, and adds the account's image pull secrets", async () => {
    await plane.client.create<ServiceAccount>(
      RESOURCES.serviceaccounts,
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'quiet', namespace: 'default' },
        automountServiceAccountToken: false,
        imagePullSecrets: [{ name: 'registry' }],
      },
      'default',
    );
    const created = await plane.client.create(RESOURCES.pods, pod('quiet', { serviceAccountName: 'quiet' }), 'default');
    expect(created.spec.volumes).toBeUndefined();
    expect(created.spec.containers[0]!.volumeMounts).toBeUndefined();
    expect(created.spec.imagePullSecrets).toEqual([{ name: 'registry' }]);
  });

  it('keeps serviceAccountName fixed on update, while other updates of the admitted pod go through', async () => {
    await plane.client.create<ServiceAccount>(
      RESOURCES.serviceaccounts,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'other', namespace: 'default' } },
      'default',
    );
    const created = await plane.client.create(RESOURCES.pods, pod('fixed'), 'default');
    const moved = structuredClone(created);
    moved.spec.serviceAccountName = 'other';
    const err = await failure(plane.client.update(RESOURCES.pods, moved));
    expect(err.status).toBe(422);
    expect(err.message).toContain('pod updates may not change fields other than');

    const labelled = structuredClone(created);
    labelled.metadata.labels = { team: 'a' };
    const updated = await plane.client.update(RESOURCES.pods, labelled);
    expect(updated.metadata.labels).toEqual({ team: 'a' });
    expect(updated.spec).toEqual(created.spec);
  });

  it('stores a mirror pod as the kubelet wrote it, and refuses one that names a ServiceAccount', async () => {
    const mirror = (name: string, spec: Record<string, unknown> = {}) => {
      const object = pod(name, spec);
      object.metadata.annotations = { 'kubernetes.io/config.mirror': 'hash' };
      return object;
    };
    const created = await plane.client.create(RESOURCES.pods, mirror('static-web'), 'default');
    expect(created.spec.serviceAccountName).toBeUndefined();
    expect(created.spec.volumes).toBeUndefined();
    const err = await failure(plane.client.create(RESOURCES.pods, mirror('static-sa', { serviceAccountName: 'default' }), 'default'));
    expect(err.message).toBe('pods "static-sa" is forbidden: a mirror pod may not reference service accounts');
  });
});
