import { describe, expect, it } from 'vitest';
import { Kernel, type AdmissionRequest } from '@skiff/kernel';
import type { KubeObject, Pod } from '@skiff/api';
import { admissionRequest, admit } from '@skiff/testing';
import plugin from './index.js';
import { ServiceAccountAdmissionError } from './errors.js';
import type { ServiceAccount } from '@skiff/api';

const MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const VOLUME_NAME = /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/;

const kernelWith = (options: object = {}) => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { defaultAccountWaitMs: 0, ...options });

function pod(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team-a', ...metadata },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec },
  } as Pod;
}

function account(name = 'default', fields: Partial<ServiceAccount> = {}, annotations?: Record<string, string>): ServiceAccount {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'team-a', ...(annotations && { annotations }) }, ...fields };
}

async function admitted(kernel: Kernel, object: Pod, objects: KubeObject[] = [account()]): Promise<Pod> {
  return (await admit(kernel, admissionRequest({ object, objects }))) as Pod;
}

async function refusal(kernel: Kernel, request: AdmissionRequest): Promise<ServiceAccountAdmissionError> {
  const err = await admit(kernel, request).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceAccountAdmissionError);
  return err as ServiceAccountAdmissionError;
}

const volumes = (p: Pod) => (p.spec.volumes ?? []) as { name: string; projected?: unknown }[];
const mounts = (container: unknown) =>
  ((container as { volumeMounts?: unknown[] }).volumeMounts ?? []) as { name: string; mountPath: string; readOnly?: boolean }[];

describe('service account admission: defaults and the token volume', () => {
  const kernel = kernelWith();

  it('runs a pod as `default` and gives it the kube-api-access projected volume, mounted read-only in init and app containers', async () => {
    const result = await admitted(
      kernel,
      pod({
        initContainers: [{ name: 'setup', image: 'busybox' }],
        containers: [
          { name: 'app', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/data' }] },
          { name: 'sidecar', image: 'envoy' },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
      }),
    );
    expect(result.spec.serviceAccountName).toBe('default');
    expect(result.spec.serviceAccount).toBe('default');
    const [data, token] = volumes(result);
    expect(data!.name).toBe('data');
    expect(token!.name).toMatch(VOLUME_NAME);
    expect(token).toEqual({
      name: token!.name,
      projected: {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
        defaultMode: 420,
      },
    });
    const tokenMount = { name: token!.name, readOnly: true, mountPath: MOUNT_PATH };
    expect(mounts(result.spec.initContainers![0])).toEqual([tokenMount]);
    expect(mounts(result.spec.containers[0])).toEqual([{ name: 'data', mountPath: '/data' }, tokenMount]);
    expect(mounts(result.spec.containers[1])).toEqual([tokenMount]);
    expect(result.spec.imagePullSecrets).toBeUndefined();
  });

  it('names a fresh volume for every pod', async () => {
    const names = new Set<string>();
    for (let i = 0; i < 20; i++) names.add(volumes(await admitted(kernel, pod()))[0]!.name);
    expect(names.size).toBeGreaterThan(15);
  });

  it('keeps a named ServiceAccount, and reads the deprecated serviceAccount field when serviceAccountName is empty', async () => {
    const objects = [account(), account('builder')];
    expect((await admitted(kernel, pod({ serviceAccountName: 'builder' }), objects)).spec).toMatchObject({
      serviceAccountName: 'builder',
      serviceAccount: 'builder',
    });
  });

  it('leaves containers that already mount something at the token path alone', async () => {
    const own = { name: 'own-token', mountPath: MOUNT_PATH };
    const result = await admitted(
      kernel,
      pod({
        containers: [
          { name: 'custom', image: 'x', volumeMounts: [own] },
          { name: 'plain', image: 'y' },
        ],
        volumes: [{ name: 'own-token', secret: { secretName: 'mine' } }],
      }),
    );
    const token = volumes(result)[1]!;
    expect(mounts(result.spec.containers[0])).toEqual([own]);
    expect(mounts(result.spec.containers[1])).toEqual([{ name: token.name, readOnly: true, mountPath: MOUNT_PATH }]);
  });

  it('adds no volume when every container mounts the path already', async () => {
    const own = { name: 'own-token', mountPath: MOUNT_PATH };
    const spec = { containers: [{ name: 'custom', image: 'x', volumeMounts: [own] }], volumes: [{ name: 'own-token', emptyDir: {} }] };
    const result = await admitted(kernel, pod(spec));
    expect(volumes(result).map((v) => v.name)).toEqual(['own-token']);
    expect(mounts(result.spec.containers[0])).toEqual([own]);
  });

  it('reuses a kube-api-access volume the pod already has', async () => {
    const existing = { name: 'kube-api-access-abcde', projected: { sources: [] } };
    const result = await admitted(kernel, pod({ volumes: [existing] }));
    expect(volumes(result)).toEqual([existing]);
    expect(mounts(result.spec.containers[0])).toEqual([{ name: 'kube-api-access-abcde', readOnly: true, mountPath: MOUNT_PATH }]);
  });

  it('does not mount into ephemeral containers', async () => {
    const result = await admitted(kernel, pod({ ephemeralContainers: [{ name: 'debug', image: 'busybox' }] }));
    expect(mounts((result.spec.ephemeralContainers as unknown[])[0])).toEqual([]);
  });

  it('follows automountServiceAccountToken: the pod first, then the ServiceAccount', async () => {
    const optedOut = [account('default', { automountServiceAccountToken: false })];
    const optedIn = [account('default', { automountServiceAccountToken: true })];
    expect(volumes(await admitted(kernel, pod(), optedOut))).toEqual([]);
    expect(mounts((await admitted(kernel, pod(), optedOut)).spec.containers[0])).toEqual([]);
    expect(volumes(await admitted(kernel, pod({ automountServiceAccountToken: true }), optedOut))).toHaveLength(1);
    expect(volumes(await admitted(kernel, pod({ automountServiceAccountToken: false }), optedIn))).toEqual([]);
  });

  it('mounts nothing with mountToken: false, but still defaults and checks the account', async () => {
    const result = await admitted(kernelWith({ mountToken: false }), pod());
    expect(result.spec.serviceAccountName).toBe('default');
    expect(result.spec.volumes).toBeUndefined();
  });

  it("gives a pod without image pull secrets its ServiceAccount's", async () => {
    const objects = [account('default', { imagePullSecrets: [{ name: 'registry' }, { name: 'mirror' }] })];
    expect((await admitted(kernel, pod(), objects)).spec.imagePullSecrets).toEqual([{ name: 'registry' }, { name: 'mirror' }]);
    expect((await admitted(kernel, pod({ imagePullSecrets: [{ name: 'own' }] }), objects)).spec.imagePullSecrets).toEqual([{ name: 'own' }]);
  });
});

describe('service account admission: refusals', () => {
  const kernel = kernelWith();

  it('refuses a pod whose ServiceAccount does not exist, as kube-apiserver words it', async () => {
    const err = await refusal(kernel, admissionRequest({ object: pod({ serviceAccountName: 'robot' }), objects: [account()] }));
    expect(err.status).toBe(403);
    expect(err.message).toBe('pods "web" is forbidden: error looking up service account team-a/robot: serviceaccount "robot" not found');
    expect(err.code).toBe('SKIFF_ERR_SERVICE_ACCOUNT_NOT_FOUND');
  });

  it('refuses a pod in a namespace without a default ServiceAccount', async () => {
    const err = await refusal(kernel, admissionRequest({ object: pod(), objects: [] }));
    expect(err.message).toBe('pods "web" is forbidden: error looking up service account team-a/default: serviceaccount "default" not found');
  });

  it('waits a little for the default ServiceAccount of a new namespace, and only for that one', async () => {
    const objects: KubeObject[] = [];
    const patient = kernelWith({ defaultAccountWaitMs: 3000 });
    setTimeout(() => objects.push(account()), 150);
    const started = performance.now();
    const result = (await admit(patient, admissionRequest({ object: pod(), objects }))) as Pod;
    expect(result.spec.serviceAccountName).toBe('default');
    expect(performance.now() - started).toBeLessThan(2000);

    const named = performance.now();
    await refusal(patient, admissionRequest({ object: pod({ serviceAccountName: 'robot' }), objects }));
    expect(performance.now() - named).toBeLessThan(100);
  });

  it('lets other resources, updates and subresources through untouched', async () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team-a' } };
    const resource = { group: '', version: 'v1', resource: 'configmaps' };
    expect(await admit(kernel, admissionRequest({ object: configMap, resource, objects: [] }))).toEqual(configMap);
    const stored = pod({ serviceAccountName: 'gone' });
    expect(await admit(kernel, admissionRequest({ object: stored, oldObject: stored, operation: 'UPDATE', objects: [] }))).toEqual(stored);
    const status = pod();
    expect(await admit(kernel, admissionRequest({ object: status, subresource: 'status', operation: 'UPDATE', objects: [] }))).toEqual(status);
    await expect(admit(kernel, admissionRequest({ operation: 'DELETE', name: 'web', objects: [] }))).resolves.toBeUndefined();
  });
});

describe('service account admission: mirror pods', () => {
  const kernel = kernelWith();
  const mirror = (spec: Record<string, unknown> = {}) => pod(spec, { annotations: { 'kubernetes.io/config.mirror': 'abc123' } });

  it('leaves a mirror pod exactly as the kubelet wrote it, even in a namespace without ServiceAccounts', async () => {
    const object = mirror();
    const before = structuredClone(object);
    expect(await admit(kernel, admissionRequest({ object, objects: [] }))).toEqual(before);
  });

  it.each([
    ['a ServiceAccount', { serviceAccountName: 'default' }, 'a mirror pod may not reference service accounts'],
    ['a secret volume', { volumes: [{ name: 's', secret: { secretName: 'x' } }] }, 'a mirror pod may not reference secrets'],
    ['a projected secret', { volumes: [{ name: 'p', projected: { sources: [{ secret: { name: 'x' } }] } }] }, 'a mirror pod may not reference secrets'],
    ['CSI credentials', { volumes: [{ name: 'c', csi: { driver: 'd', nodePublishSecretRef: { name: 'x' } } }] }, 'a mirror pod may not reference secrets'],
    [
      'a secret in env',
      { containers: [{ name: 'a', image: 'i', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'x', key: 'k' } } }] }] },
      'a mirror pod may not reference secrets',
    ],
    ['a secret in envFrom', { initContainers: [{ name: 'a', image: 'i', envFrom: [{ secretRef: { name: 'x' } }] }] }, 'a mirror pod may not reference secrets'],
    ['image pull secrets', { imagePullSecrets: [{ name: 'x' }] }, 'a mirror pod may not reference secrets'],
    [
      'a token projection',
      { volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] },
      'a mirror pod may not use ServiceAccountToken volume projections',
    ],
    [
      'a trust bundle projection',
      { volumes: [{ name: 't', projected: { sources: [{ clusterTrustBundle: { name: 'b', path: 'ca' } }] } }] },
      'a mirror pod may not use ClusterTrustBundle projected volumes',
    ],
  ])('refuses a mirror pod that references %s', async (_what, spec, message) => {
    const err = await refusal(kernel, admissionRequest({ object: mirror(spec), objects: [account()] }));
    expect(err.message).toBe(`pods "web" is forbidden: ${message}`);
  });
});

describe('service account admission: secrets limited to the ServiceAccount', () => {
  const limited = kernelWith({ limitSecretReferences: true });
  const listing = account('default', { secrets: [{ name: 'allowed' }], imagePullSecrets: [{ name: 'registry' }] });
  const secretVolume = (secretName: string) => ({ volumes: [{ name: 'v', secret: { secretName } }] });
  const secretEnv = (list: string, name: string) => ({
    [list]: [{ name: 'app', image: 'i', env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name, key: 'k' } } }] }],
  });

  it('admits pods that reference only listed secrets', async () => {
    const spec = { ...secretVolume('allowed'), ...secretEnv('containers', 'allowed'), imagePullSecrets: [{ name: 'registry' }] };
    await expect(admitted(limited, pod(spec), [listing])).resolves.toMatchObject({ kind: 'Pod' });
  });

  it.each([
    [
      'a secret volume',
      secretVolume('other'),
      'volume with secret.secretName="other" is not allowed because service account default does not reference that secret',
    ],
    [
      'env of a container',
      secretEnv('containers', 'other'),
      'container app with envVar PASSWORD referencing secret.secretName="other" is not allowed because service account default does not reference that secret',
    ],
    [
      'env of an init container',
      secretEnv('initContainers', 'other'),
      'init container app with envVar PASSWORD referencing secret.secretName="other" is not allowed because service account default does not reference that secret',
    ],
    [
      'envFrom',
      { containers: [{ name: 'app', image: 'i', envFrom: [{ secretRef: { name: 'other' } }] }] },
      'container app with envFrom referencing secret.secretName="other" is not allowed because service account default does not reference that secret',
    ],
    [
      'an image pull secret',
      { imagePullSecrets: [{ name: 'registry' }, { name: 'other' }] },
      'imagePullSecrets[1].name="other" is not allowed because service account default does not reference that imagePullSecret',
    ],
  ])('refuses %s the ServiceAccount does not list', async (_what, spec, message) => {
    const err = await refusal(limited, admissionRequest({ object: pod(spec), objects: [listing] }));
    expect(err.message).toBe(`pods "web" is forbidden: ${message}`);
  });

  it('limits only accounts annotated kubernetes.io/enforce-mountable-secrets when the option is off', async () => {
    const open = kernelWith();
    await expect(admitted(open, pod(secretVolume('other')), [listing])).resolves.toMatchObject({ kind: 'Pod' });
    const annotated = account('default', { secrets: [] }, { 'kubernetes.io/enforce-mountable-secrets': 'true' });
    await refusal(open, admissionRequest({ object: pod(secretVolume('other')), objects: [annotated] }));
    const notTrue = account('default', { secrets: [] }, { 'kubernetes.io/enforce-mountable-secrets': 'yes' });
    await expect(admitted(open, pod(secretVolume('other')), [notTrue])).resolves.toMatchObject({ kind: 'Pod' });
  });

  it('checks ephemeral containers added through pods/ephemeralcontainers', async () => {
    const running = pod({ serviceAccountName: 'default' });
    const debug = pod({ serviceAccountName: 'default', ...secretEnv('ephemeralContainers', 'other') });
    const request = admissionRequest({ object: debug, oldObject: running, operation: 'UPDATE', subresource: 'ephemeralcontainers', objects: [listing] });
    const err = await refusal(limited, request);
    expect(err.message).toBe(
      'pods "web" is forbidden: ephemeral container app with envVar PASSWORD referencing secret.secretName="other" is not allowed because service account default does not reference that secret',
    );
    const allowed = pod({ serviceAccountName: 'default', ...secretEnv('ephemeralContainers', 'allowed') });
    const fine = admissionRequest({ object: allowed, oldObject: running, operation: 'UPDATE', subresource: 'ephemeralcontainers', objects: [listing] });
    await expect(admit(limited, fine)).resolves.toEqual(allowed);
  });
});

describe('service account admission: options', () => {
  it('rejects a wrongly typed option with its path', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { mountToken: 'yes' })).toThrow(
      'plugin "@skiff/plugin-admission-service-account": option "mountToken" must be a boolean (got "yes")',
    );
  });
});
