import { isApiError, RESOURCES, type ConfigMap, type Secret } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import bootstrapSigner, { BootstrapSignerError, createBootstrapToken, verifyClusterInfoSignature } from './index.js';
import { rfc3339 } from './create-token.js';

async function clusterInfo(client: ApiClient): Promise<ConfigMap | undefined> {
  try {
    return await client.get<ConfigMap>(RESOURCES.configmaps, 'cluster-info', 'kube-public');
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

async function secretExists(client: ApiClient, name: string): Promise<boolean> {
  try {
    await client.get<Secret>(RESOURCES.secrets, name, 'kube-system');
    return true;
  } catch (err) {
    if (isApiError(err, 'NotFound')) return false;
    throw err;
  }
}

/** A token Secret written directly, for expirations and usages `createBootstrapToken` would not write. */
async function writeToken(client: ApiClient, id: string, data: Record<string, string>, type = 'bootstrap.kubernetes.io/token'): Promise<void> {
  await client.create<Secret>(
    RESOURCES.secrets,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
      type,
      stringData: { 'token-id': id, 'token-secret': '0123456789abcdef', ...data },
    },
    'kube-system',
  );
}

const signatureKeys = (configMap: ConfigMap | undefined) =>
  Object.keys(configMap?.data ?? {})
    .filter((key) => key.startsWith('jws-kubeconfig-'))
    .sort();

const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');

describe('bootstrap signer and token cleaner', () => {
  let plane: ControlPlane;

  beforeAll(async () => {
    plane = await startControlPlane([bootstrapSigner]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('creates cluster-info: a kubeconfig with the API server and its CA, and no credentials', async () => {
    const configMap = await waitFor('cluster-info', () => clusterInfo(plane.client));
    const { url, caPem } = plane.kernel.resolve('apiServerInfo');
    const kubeconfig = parse(configMap.data!.kubeconfig!);
    expect(kubeconfig).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: '', cluster: { server: url, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
      contexts: [],
      'current-context': '',
      preferences: {},
      users: [],
    });
  });

  it('signs it for a new token, verifiably with that token only', async () => {
    const token = await createBootstrapToken(plane.client, { description: 'for the signer test' });
    const configMap = await waitFor('a signature', async () => {
      const current = await clusterInfo(plane.client);
      return current?.data?.[`jws-kubeconfig-${token.id}`] && current;
    });
    const { kubeconfig, [`jws-kubeconfig-${token.id}`]: jws } = configMap.data!;
    expect(verifyClusterInfoSignature(kubeconfig!, jws!, token.id, token.secret)).toBe(true);
    expect(verifyClusterInfoSignature(kubeconfig!, jws!, token.id, 'aaaaaaaaaaaaaaaa')).toBe(false);
    expect(verifyClusterInfoSignature(kubeconfig!.replace('server:', 'server: '), jws!, token.id, token.secret)).toBe(false);
  });

  it('signs for every signing token and drops the signature of a token that goes', async () => {
    const first = await createBootstrapToken(plane.client);
    const second = await createBootstrapToken(plane.client);
    const authenticationOnly = await createBootstrapToken(plane.client, { usages: ['authentication'] });
    await waitFor('both signatures', async () => {
      const keys = signatureKeys(await clusterInfo(plane.client));
      return keys.includes(`jws-kubeconfig-${first.id}`) && keys.includes(`jws-kubeconfig-${second.id}`);
    });
    expect(signatureKeys(await clusterInfo(plane.client))).not.toContain(`jws-kubeconfig-${authenticationOnly.id}`);
    await plane.client.delete(RESOURCES.secrets, `bootstrap-token-${first.id}`, 'kube-system');
    await waitFor(
      'the signature of the deleted token gone',
      async () => !signatureKeys(await clusterInfo(plane.client)).includes(`jws-kubeconfig-${first.id}`),
    );
    expect(signatureKeys(await clusterInfo(plane.client))).toContain(`jws-kubeconfig-${second.id}`);
  });

  it('puts back a changed kubeconfig, a stray signature and a deleted ConfigMap, keeping keys of its own', async () => {
    const token = await createBootstrapToken(plane.client);
    const signed = await waitFor('signed', async () => {
      const current = await clusterInfo(plane.client);
      return current?.data?.[`jws-kubeconfig-${token.id}`] && current;
    });
    const original = signed.data!;
    await plane.client.update<ConfigMap>(RESOURCES.configmaps, {
      ...signed,
      data: { ...original, kubeconfig: 'apiVersion: v1\nkind: Config\n', 'jws-kubeconfig-zzzzzz': 'forged..x', note: 'kept' },
    });
    await waitFor('restored', async () => {
      const data = (await clusterInfo(plane.client))?.data ?? {};
      return data.kubeconfig === original.kubeconfig && !data['jws-kubeconfig-zzzzzz'] && data.note === 'kept';
    });
    const before = await clusterInfo(plane.client);
    await plane.client.delete(RESOURCES.configmaps, 'cluster-info', 'kube-public');
    const again = await waitFor('created again', async () => {
      const current = await clusterInfo(plane.client);
      return current && current.metadata.uid !== before!.metadata.uid && current.data?.[`jws-kubeconfig-${token.id}`] && current;
    });
    expect(again.data![`jws-kubeconfig-${token.id}`]).toBe(original[`jws-kubeconfig-${token.id}`]);
  });

  it('deletes a token whose expiration has passed, or is no time at all', async () => {
    await writeToken(plane.client, 'past01', { expiration: '2020-01-01T00:00:00Z', 'usage-bootstrap-signing': 'true' });
    await writeToken(plane.client, 'badexp', { expiration: 'next week' });
    await waitFor(
      'both deleted',
      async () => !(await secretExists(plane.client, 'bootstrap-token-past01')) && !(await secretExists(plane.client, 'bootstrap-token-badexp')),
    );
  });

  it('deletes a token when it expires, and the signer drops its signature', async () => {
    await writeToken(plane.client, 'soon01', { expiration: rfc3339(Date.now() + 3000), 'usage-bootstrap-signing': 'true' });
    await waitFor('signed while valid', async () => signatureKeys(await clusterInfo(plane.client)).includes('jws-kubeconfig-soon01'));
    expect(await secretExists(plane.client, 'bootstrap-token-soon01')).toBe(true);
    await waitFor('deleted once expired', async () => !(await secretExists(plane.client, 'bootstrap-token-soon01')), { timeoutMs: 8000 });
    await waitFor('signature dropped', async () => !signatureKeys(await clusterInfo(plane.client)).includes('jws-kubeconfig-soon01'));
  });

  it('leaves tokens without expiration, later ones, and other Secrets alone', async () => {
    const forever = await createBootstrapToken(plane.client, { ttlSeconds: 0 });
    const later = await createBootstrapToken(plane.client, { ttlSeconds: 3600 });
    await writeToken(plane.client, 'opaque', { expiration: '2020-01-01T00:00:00Z' }, 'Opaque');
    // An expired token written after them: once it is gone, the cleaner has seen the others too.
    await writeToken(plane.client, 'marker', { expiration: '2020-01-01T00:00:00Z' });
    await waitFor('the marker deleted', async () => !(await secretExists(plane.client, 'bootstrap-token-marker')));
    for (const name of [`bootstrap-token-${forever.id}`, `bootstrap-token-${later.id}`, 'bootstrap-token-opaque'])
      expect(await secretExists(plane.client, name), name).toBe(true);
  });
});

describe('createBootstrapToken', () => {
  let plane: ControlPlane;

  beforeAll(async () => {
    plane = await startControlPlane([]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it("writes the Secret kubeadm writes, with kubeadm's defaults", async () => {
    const before = Date.now();
    const token = await createBootstrapToken(plane.client, { description: 'joining workers' });
    expect(token.id).toMatch(/^[a-z0-9]{6}$/);
    expect(token.secret).toMatch(/^[a-z0-9]{16}$/);
    expect(token.token).toBe(`${token.id}.${token.secret}`);
    const secret = await plane.client.get<Secret>(RESOURCES.secrets, `bootstrap-token-${token.id}`, 'kube-system');
    expect(secret.type).toBe('bootstrap.kubernetes.io/token');
    const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, decode(value)]));
    expect(data).toEqual({
      'token-id': token.id,
      'token-secret': token.secret,
      expiration: token.expiration,
      description: 'joining workers',
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
      'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
    });
    const expires = Date.parse(token.expiration!);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 86_400_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 86_400_000);
  });

  it('writes what it is asked: no expiration, one usage, other groups', async () => {
    const token = await createBootstrapToken(plane.client, { ttlSeconds: 0, usages: ['authentication'], groups: ['system:bootstrappers:edge'] });
    expect(token.expiration).toBeUndefined();
    const secret = await plane.client.get<Secret>(RESOURCES.secrets, `bootstrap-token-${token.id}`, 'kube-system');
    expect(Object.keys(secret.data ?? {}).sort()).toEqual(['auth-extra-groups', 'token-id', 'token-secret', 'usage-bootstrap-authentication']);
    expect(decode(secret.data!['auth-extra-groups'])).toBe('system:bootstrappers:edge');
    const signing = await createBootstrapToken(plane.client, { usages: ['signing'] });
    const signingSecret = await plane.client.get<Secret>(RESOURCES.secrets, `bootstrap-token-${signing.id}`, 'kube-system');
    expect(signingSecret.data?.['auth-extra-groups']).toBeUndefined();
  });

  it('refuses options kubeadm refuses, saying which', async () => {
    const refusal = (options: Parameters<typeof createBootstrapToken>[1]) => createBootstrapToken(plane.client, options).catch((err: unknown) => err);
    const cases: [Parameters<typeof createBootstrapToken>[1], string][] = [
      [{ ttlSeconds: -1 }, 'ttlSeconds must be a whole number'],
      [{ usages: [] }, 'at least one usage'],
      [{ usages: ['signing', 'other' as 'signing'] }, 'unknown usage "other"'],
      [{ groups: ['system:masters'] }, 'group "system:masters" must match'],
      [{ usages: ['signing'], groups: ['system:bootstrappers:x'] }, 'groups apply only to a token used for authentication'],
    ];
    for (const [options, message] of cases) {
      const err = await refusal(options);
      expect(err, message).toBeInstanceOf(BootstrapSignerError);
      expect((err as BootstrapSignerError).code).toBe('SKIFF_ERR_BOOTSTRAP_TOKEN_OPTIONS');
      expect((err as Error).message).toContain(message);
    }
  });
});

describe('bootstrap signer options', () => {
  it('publishes the server it is given, and signs even with the token cleaner off', async () => {
    const plane = await startControlPlane([[bootstrapSigner, { server: 'https://10.1.2.3:6443', rbac: false }]], { enabled: ['bootstrapsigner'] });
    try {
      const configMap = await waitFor('cluster-info', () => clusterInfo(plane.client));
      expect(parse(configMap.data!.kubeconfig!).clusters[0].cluster.server).toBe('https://10.1.2.3:6443');
      await writeToken(plane.client, 'short1', { expiration: rfc3339(Date.now() + 2500), 'usage-bootstrap-signing': 'true' });
      await waitFor('signed while valid', async () => signatureKeys(await clusterInfo(plane.client)).includes('jws-kubeconfig-short1'));
      // Nobody deletes the expired token here: the signer drops its signature on its own, when it expires.
      await waitFor('signature dropped', async () => !signatureKeys(await clusterInfo(plane.client)).includes('jws-kubeconfig-short1'), { timeoutMs: 8000 });
      expect(await secretExists(plane.client, 'bootstrap-token-short1')).toBe(true);
      await expect(plane.client.get(RESOURCES.clusterrolebindings, 'kubeadm:kubelet-bootstrap')).rejects.toMatchObject({ reason: 'NotFound' });
    } finally {
      await plane.stop();
    }
  });

  it('refuses a server that is not an https URL, naming the option', async () => {
    await expect(startControlPlane([[bootstrapSigner, { server: '10.1.2.3:6443' }]], { config: { logLevel: 'silent' } })).rejects.toThrow(/option "server"/);
  });
});
