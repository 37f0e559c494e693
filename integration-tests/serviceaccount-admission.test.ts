import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The ServiceAccount admission plugin in a real `skiff up`, driven by the real kubectl 1.36: pods from
// `kubectl run` and from a Deployment's ReplicaSet run as the `default` ServiceAccount with the
// kube-api-access projected volume mounted in every container, a pod naming a missing ServiceAccount is
// refused with kube-apiserver's message, and a ServiceAccount that opts out of automounting keeps the volume out.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('serviceaccount-admission');
const cacheDir = tempDir('serviceaccount-admission-cache');
const MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const VOLUME_NAME = /^kube-api-access-[a-z0-9]{5}$/;
let skiff: RunningSkiff;
const { kubectl, ok, json } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

/** What the token volume of an upstream pod holds, whatever its random name. */
const tokenVolume = (name: string) => ({
  name,
  projected: {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  },
});

/** Checks a pod runs as `account` with the token volume mounted read-only in every container; returns the volume's name. */
function expectTokenMounted(pod: any, account = 'default'): string {
  expect(pod.spec.serviceAccountName).toBe(account);
  expect(pod.spec.serviceAccount).toBe(account);
  const volume = (pod.spec.volumes as any[]).find((v) => v.name.startsWith('kube-api-access-'));
  expect(volume.name).toMatch(VOLUME_NAME);
  expect(volume).toEqual(tokenVolume(volume.name));
  for (const container of [...(pod.spec.initContainers ?? []), ...pod.spec.containers])
    expect(container.volumeMounts).toContainEqual({ name: volume.name, mountPath: MOUNT_PATH, readOnly: true });
  return volume.name as string;
}

describe('ServiceAccount admission through kubectl 1.36', () => {
  it('gives a `kubectl run` pod serviceAccountName default and the kube-api-access volume and mount, and it runs', async () => {
    await waitFor('the default ServiceAccount', () => ok('get', 'serviceaccount', 'default'), CLUSTER_TIMEOUT);
    await ok('run', 'web', '--image=nginx');
    const pod = await json('get', 'pod', 'web');
    const volume = expectTokenMounted(pod);
    expect(await ok('get', 'pod', 'web', '-o', `jsonpath={.spec.containers[0].volumeMounts[?(@.name=="${volume}")].mountPath}`)).toBe(MOUNT_PATH);
    await waitFor('web running', async () => (await json('get', 'pod', 'web')).status.phase === 'Running', CLUSTER_TIMEOUT);
  });

  it('takes back the pod it printed: kubectl replace with a new label keeps the spec', async () => {
    const pod = await json('get', 'pod', 'web');
    pod.metadata.labels = { ...pod.metadata.labels, tier: 'front' };
    const file = join(project, 'web.json');
    writeFileSync(file, JSON.stringify(pod));
    await ok('replace', '-f', file);
    const replaced = await json('get', 'pod', 'web');
    expect(replaced.metadata.labels.tier).toBe('front');
    expect(replaced.spec).toEqual(pod.spec);
  });

  it('refuses a pod naming a ServiceAccount that does not exist, with the upstream message', async () => {
    const result = await kubectl(['run', 'robot', '--image=nginx', '--overrides={"apiVersion":"v1","spec":{"serviceAccountName":"robot"}}']);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "robot" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found',
    );
    expect((await kubectl(['get', 'pod', 'robot'])).code).not.toBe(0);
  });

  it('keeps the volume out for a ServiceAccount with automountServiceAccountToken: false, and mounts it for the pod that asks', async () => {
    await ok('create', 'serviceaccount', 'quiet');
    await ok('patch', 'serviceaccount', 'quiet', '-p', '{"automountServiceAccountToken":false}');
    await ok('run', 'quiet', '--image=nginx', '--overrides={"apiVersion":"v1","spec":{"serviceAccountName":"quiet"}}');
    const quiet = await json('get', 'pod', 'quiet');
    expect(quiet.spec.serviceAccountName).toBe('quiet');
    expect(quiet.spec.volumes).toBeUndefined();
    expect(quiet.spec.containers[0].volumeMounts).toBeUndefined();

    const asking = '{"apiVersion":"v1","spec":{"serviceAccountName":"quiet","automountServiceAccountToken":true}}';
    await ok('run', 'asking', '--image=nginx', `--overrides=${asking}`);
    expectTokenMounted(await json('get', 'pod', 'asking'), 'quiet');
  });

  it("mounts the token into a Deployment's pods, created by the ReplicaSet controller, and leaves the template alone", async () => {
    await ok('create', 'deployment', 'api', '--image=nginx', '--replicas=2');
    const pods = await waitFor(
      'two api pods running',
      async () => {
        const list = await json('get', 'pods', '-l', 'app=api');
        return list.items.length === 2 && list.items.every((p: any) => p.status.phase === 'Running') && list.items;
      },
      CLUSTER_TIMEOUT,
    );
    const names = pods.map((pod: any) => expectTokenMounted(pod));
    expect(new Set(names).size).toBe(2);
    const deployment = await json('get', 'deployment', 'api');
    expect(deployment.spec.template.spec.volumes).toBeUndefined();
    expect(deployment.spec.template.spec.serviceAccountName).toBeUndefined();
  });

  it('admits a pod sent right behind its new namespace', async () => {
    await ok('create', 'namespace', 'fresh');
    await ok('run', 'early', '--image=nginx', '-n', 'fresh');
    expectTokenMounted(await json('get', 'pod', 'early', '-n', 'fresh'));
  });
});
