import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Container, Pod, Secret } from '@skiff/api';
import { ApiEnvSources } from '../env/env-sources.js';
import { fakeApi } from '../test-support/fake-api.js';
import { ipamNetwork, simulatedRuntime } from '../test-support/node-parts.js';
import { boundPod } from '../test-support/objects.js';
import { privateRegistry } from '../test-support/private-registry.js';
import { runtimeManager } from '../test-support/runtime-manager.js';
import { ImagePuller } from './image-puller.js';

const REGISTRY = '127.0.0.1:5000';
const IMAGE = `${REGISTRY}/skiff/busybox:1`;
const b64 = (text: string) => Buffer.from(text).toString('base64');

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-kubelet-pull-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** A secret as `kubectl create secret docker-registry NAME --docker-server=SERVER --docker-username=USER --docker-password=PASSWORD` makes it. */
function dockerRegistrySecret(name: string, server: string, username: string, password: string): Secret {
  const auths = { [server]: { username, password, auth: b64(`${username}:${password}`) } };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'default' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
  };
}

async function setUp(secrets: Secret[] = []) {
  const api = fakeApi({ secrets });
  const { runtime, pulls } = privateRegistry(await simulatedRuntime(dataDir), REGISTRY, { username: 'u', password: 'pw' });
  const sources = new ApiEnvSources(api);
  const secretReads: string[] = [];
  const puller = new ImagePuller(runtime, {
    secret: (namespace, name) => {
      secretReads.push(`${namespace}/${name}`);
      return sources.secret(namespace, name);
    },
  });
  const events: string[] = [];
  const sink = (type: string, reason: string, message: string) => void events.push(`${type} ${reason}: ${message}`);
  const ensure = (pod: Pod, container: Container = pod.spec.containers[0]!) => puller.ensure(pod, container, sink);
  return { pulls, secretReads, events, ensure };
}

const podPulling = (image: string, pullSecrets?: string[]) =>
  boundPod('web-1', {
    containers: [{ name: 'web', image }],
    ...(pullSecrets ? { imagePullSecrets: pullSecrets.map((name) => ({ name })) } : {}),
  });

describe('ImagePuller with pull secrets', () => {
  it('pulls without credentials when the pod has no pull secrets; a private registry answers 401', async () => {
    const { pulls, events, ensure } = await setUp();
    const waiting = await ensure(podPulling(IMAGE));
    expect(pulls).toEqual([{ image: IMAGE }]);
    expect(waiting).toEqual({
      reason: 'ErrImagePull',
      message: `Failed to pull image "${IMAGE}": failed to resolve reference "${IMAGE}": pulling from host ${REGISTRY} failed with status code [manifests 1]: 401 Unauthorized`,
    });
    expect(events.at(-1)).toBe('Warning Failed: Error: ErrImagePull');
  });

  it("passes the matching secret's username and password to the runtime", async () => {
    const { pulls, events, ensure } = await setUp([dockerRegistrySecret('regcred', REGISTRY, 'u', 'pw')]);
    expect(await ensure(podPulling(IMAGE, ['regcred']))).toBeUndefined();
    expect(pulls).toEqual([{ image: IMAGE, auth: { username: 'u', password: 'pw' } }]);
    expect(events.map((e) => e.split(':')[0])).toEqual(['Normal Pulling', 'Normal Pulled']);
  });

  it('tries each matching credential in order until one pulls', async () => {
    const { pulls, ensure } = await setUp([dockerRegistrySecret('stale', REGISTRY, 'u', 'old'), dockerRegistrySecret('current', REGISTRY, 'u', 'pw')]);
    expect(await ensure(podPulling(IMAGE, ['stale', 'current']))).toBeUndefined();
    expect(pulls.map((pull) => pull.auth)).toEqual([
      { username: 'u', password: 'old' },
      { username: 'u', password: 'pw' },
    ]);
  });

  it('fails with every attempt when no credential pulls, without a last anonymous try (as the kubelet does)', async () => {
    const { pulls, ensure } = await setUp([
      dockerRegistrySecret('wrong', REGISTRY, 'u', 'nope'),
      dockerRegistrySecret('also-wrong', `http://${REGISTRY}`, 'v', 'nope'),
    ]);
    const waiting = await ensure(podPulling(IMAGE, ['wrong', 'also-wrong']));
    expect(pulls.map((pull) => pull.auth?.username)).toEqual(['u', 'v']);
    // Both failed alike: Go's aggregate error prints a repeated message once.
    expect(waiting).toEqual({
      reason: 'ErrImagePull',
      message: `Failed to pull image "${IMAGE}": failed to resolve reference "${IMAGE}": pulling from host ${REGISTRY} failed with status code [manifests 1]: 401 Unauthorized`,
    });
  });

  it('lists different failures of the attempts in brackets', async () => {
    const runtime = await simulatedRuntime(dataDir);
    runtime.pullImage = async (_image, auth) => {
      throw new Error(`denied to ${auth?.username}`);
    };
    const api = fakeApi({ secrets: [dockerRegistrySecret('one', REGISTRY, 'a', 'x'), dockerRegistrySecret('two', REGISTRY, 'b', 'y')] });
    const waiting = await new ImagePuller(runtime, new ApiEnvSources(api)).ensure(
      podPulling(IMAGE, ['one', 'two']),
      { name: 'web', image: IMAGE },
      () => undefined,
    );
    expect(waiting).toEqual({ reason: 'ErrImagePull', message: `Failed to pull image "${IMAGE}": [denied to a, denied to b]` });
  });

  it("pulls without credentials when no secret covers the image's registry", async () => {
    const { pulls, ensure } = await setUp([dockerRegistrySecret('elsewhere', 'registry.example.com', 'u', 'pw')]);
    expect(await ensure(podPulling('busybox:1.36', ['elsewhere']))).toBeUndefined();
    expect(pulls).toEqual([{ image: 'busybox:1.36' }]);
  });

  it('warns FailedToRetrieveImagePullSecret for missing secrets and pulls with the ones that exist', async () => {
    const { pulls, events, ensure } = await setUp([dockerRegistrySecret('regcred', REGISTRY, 'u', 'pw')]);
    expect(await ensure(podPulling(IMAGE, ['absent', 'regcred', 'gone']))).toBeUndefined();
    expect(events[0]).toBe(
      'Warning FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (absent, gone); attempting to pull the image may not succeed.',
    );
    expect(pulls).toEqual([{ image: IMAGE, auth: { username: 'u', password: 'pw' } }]);
  });

  it('fails the pull, naming the secret, when its docker config is broken', async () => {
    const broken = dockerRegistrySecret('broken', REGISTRY, 'u', 'pw');
    broken.data = { '.dockerconfigjson': b64(JSON.stringify({ auths: { [REGISTRY]: { auth: '%%%' } } })) };
    const { pulls, ensure } = await setUp([broken]);
    expect(await ensure(podPulling(IMAGE, ['broken']))).toEqual({
      reason: 'ErrImagePull',
      message: `Failed to pull image "${IMAGE}": pull secret "default/broken" .dockerconfigjson "${REGISTRY}".auth is not valid base64`,
    });
    expect(pulls).toEqual([]);
  });

  it('reads the secrets only when it pulls', async () => {
    const { pulls, secretReads, events, ensure } = await setUp([dockerRegistrySecret('regcred', REGISTRY, 'u', 'pw')]);
    await ensure(podPulling(IMAGE, ['regcred']));
    expect(secretReads).toEqual(['default/regcred']);
    events.length = 0;
    expect(await ensure(podPulling(IMAGE, ['regcred']))).toBeUndefined();
    expect(events).toEqual([`Normal Pulled: Container image "${IMAGE}" already present on machine`]);
    expect(secretReads).toHaveLength(1);
    expect(pulls).toHaveLength(1);
  });
});

describe('PodRuntimeManager with pull secrets', () => {
  it("pulls a pod's private image with its imagePullSecrets from the kubelet's API and starts it", async () => {
    const api = fakeApi({ secrets: [dockerRegistrySecret('regcred', `https://${REGISTRY}/v2/`, 'u', 'pw')] });
    const { runtime, pulls } = privateRegistry(await simulatedRuntime(dataDir), REGISTRY, { username: 'u', password: 'pw' });
    const network = await ipamNetwork(dataDir);
    const { manager } = runtimeManager({ runtime, network, dataDir, api });
    const observed = await manager.sync(podPulling(IMAGE, ['regcred']));
    expect(observed.containers[0]).toMatchObject({ status: { state: 'CONTAINER_RUNNING' } });
    expect(pulls).toEqual([{ image: IMAGE, auth: { username: 'u', password: 'pw' } }]);
  });
});
