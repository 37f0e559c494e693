import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isApiError, RESOURCES, type ConfigMap, type Namespace } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import rootCaPublisher from './index.js';

async function find(client: ApiClient, namespace: string): Promise<ConfigMap | undefined> {
  try {
    return await client.get<ConfigMap>(RESOURCES.configmaps, 'kube-root-ca.crt', namespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

async function createNamespace(client: ApiClient, name: string): Promise<void> {
  await client.create<Namespace>(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

describe('root CA publisher against a real API server', () => {
  let plane: ControlPlane;
  let caPem: string;
  const published = (configMap: ConfigMap | undefined) => configMap?.data?.['ca.crt'] === caPem && Object.keys(configMap.data).length === 1;

  beforeAll(async () => {
    plane = await startControlPlane([rootCaPublisher]);
    caPem = plane.kernel.resolve('apiServerInfo').caPem;
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it("publishes the API server's CA in the system namespaces and in a new one", async () => {
    expect(caPem).toContain('-----BEGIN CERTIFICATE-----');
    for (const namespace of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      await waitFor(`kube-root-ca.crt in ${namespace}`, async () => published(await find(plane.client, namespace)));
    await createNamespace(plane.client, 'team-a');
    await waitFor('kube-root-ca.crt in team-a', async () => published(await find(plane.client, 'team-a')));
  });

  it('puts back a deleted ConfigMap', async () => {
    await createNamespace(plane.client, 'team-b');
    const first = await waitFor('kube-root-ca.crt in team-b', () => find(plane.client, 'team-b'));
    await plane.client.delete(RESOURCES.configmaps, 'kube-root-ca.crt', 'team-b');
    const again = await waitFor('kube-root-ca.crt back in team-b', async () => {
      const configMap = await find(plane.client, 'team-b');
      return configMap?.metadata.uid !== first.metadata.uid && published(configMap) && configMap;
    });
    expect(again.metadata.namespace).toBe('team-b');
  });

  it('restores changed data, dropping keys someone added', async () => {
    await createNamespace(plane.client, 'team-c');
    const current = await waitFor('kube-root-ca.crt in team-c', () => find(plane.client, 'team-c'));
    const changed = await plane.client.update<ConfigMap>(RESOURCES.configmaps, { ...current, data: { 'ca.crt': 'not a certificate', extra: 'x' } });
    await waitFor('the certificate restored', async () => {
      const configMap = await find(plane.client, 'team-c');
      return configMap?.metadata.resourceVersion !== changed.metadata.resourceVersion && published(configMap);
    });
  });

  it('leaves other ConfigMaps alone', async () => {
    await plane.client.create<ConfigMap>(
      RESOURCES.configmaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a' }, data: { a: '1' } },
      'team-a',
    );
    const settings = await plane.client.update<ConfigMap>(RESOURCES.configmaps, {
      ...(await plane.client.get<ConfigMap>(RESOURCES.configmaps, 'settings', 'team-a')),
      data: { a: '2' },
    });
    // A ConfigMap change the publisher does watch, after the one it must not react to.
    await plane.client.delete(RESOURCES.configmaps, 'kube-root-ca.crt', 'team-a');
    await waitFor('kube-root-ca.crt back in team-a', async () => published(await find(plane.client, 'team-a')));
    expect((await plane.client.get<ConfigMap>(RESOURCES.configmaps, 'settings', 'team-a')).metadata.resourceVersion).toBe(settings.metadata.resourceVersion);
  });
});

describe('root CA publisher with a CA file', () => {
  it('publishes the file it is given, and refuses to start on a file that is no certificate', async () => {
    // Another cluster's CA: the one a control plane made in its own data dir.
    const reference = await startControlPlane([]);
    const otherCa = reference.kernel.resolve('apiServerInfo').caPem;
    await reference.stop();
    const dir = mkdtempSync(join(tmpdir(), 'skiff-root-ca-'));
    writeFileSync(join(dir, 'other-ca.crt'), otherCa);
    writeFileSync(join(dir, 'garbage.crt'), 'hello');

    const plane = await startControlPlane([[rootCaPublisher, { caFile: join(dir, 'other-ca.crt') }]]);
    try {
      await waitFor('the given CA in default', async () => (await find(plane.client, 'default'))?.data?.['ca.crt'] === otherCa);
      expect(plane.kernel.resolve('apiServerInfo').caPem).not.toBe(otherCa);
    } finally {
      await plane.stop();
    }
    await expect(startControlPlane([[rootCaPublisher, { caFile: join(dir, 'garbage.crt') }]], { config: { logLevel: 'silent' } })).rejects.toThrow(
      /root-ca-cert-publisher.*no cluster CA certificate to publish: not a PEM certificate/,
    );
    rmSync(dir, { recursive: true, force: true });
  });
});
