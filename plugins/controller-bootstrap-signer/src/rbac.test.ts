import { request as httpsRequest } from 'node:https';
import { isApiError, RESOURCES, type ClusterRoleBinding, type ConfigMap, type Role, type RoleBinding, type Secret } from '@skiff/api';
import { startTestCluster, waitFor, type TestCluster } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import bootstrapSigner, { createBootstrapToken, verifyClusterInfoSignature } from './index.js';

/** A GET over the real HTTPS listener with no credentials at all: what a joining node does before it trusts anything. */
function anonymousGet(cluster: TestCluster, path: string): Promise<{ status: number; json: any }> {
  const { caPem } = cluster.kernel.resolve('apiServerInfo');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${cluster.server}${path}`, { ca: caPem, headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const group = (name: string) => [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name }];

describe('under the standard preset (RBAC, anonymous authentication)', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await startTestCluster({ preset: 'standard', plugins: [bootstrapSigner], logLevel: 'error' });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('creates the RBAC objects kubeadm sets up for joining nodes', async () => {
    const binding = (name: string) => cluster.client.get<ClusterRoleBinding>(RESOURCES.clusterrolebindings, name);
    expect(await binding('kubeadm:kubelet-bootstrap')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'system:node-bootstrapper' },
      subjects: group('system:bootstrappers:kubeadm:default-node-token'),
    });
    expect(await binding('kubeadm:node-autoapprove-bootstrap')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient' },
      subjects: group('system:bootstrappers:kubeadm:default-node-token'),
    });
    expect(await binding('kubeadm:node-autoapprove-certificate-rotation')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient' },
      subjects: group('system:nodes'),
    });
    expect(await cluster.client.get<Role>(RESOURCES.roles, 'kubeadm:bootstrap-signer-clusterinfo', 'kube-public')).toMatchObject({
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['cluster-info'], verbs: ['get'] }],
    });
    expect(await cluster.client.get<RoleBinding>(RESOURCES.rolebindings, 'kubeadm:bootstrap-signer-clusterinfo', 'kube-public')).toMatchObject({
      roleRef: { kind: 'Role', name: 'kubeadm:bootstrap-signer-clusterinfo' },
      subjects: [{ kind: 'User', name: 'system:anonymous' }],
    });
    // The roles they refer to are upstream's defaults, which authz-rbac writes.
    for (const name of ['system:node-bootstrapper', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient'])
      expect((await cluster.client.get(RESOURCES.clusterroles, name)).metadata.name).toBe(name);
  });

  it('lets an anonymous client read cluster-info, and check it with a token it holds', async () => {
    const token = await createBootstrapToken(cluster.client);
    const answer = await waitFor('cluster-info signed, read anonymously', async () => {
      const read = await anonymousGet(cluster, '/api/v1/namespaces/kube-public/configmaps/cluster-info');
      return read.status === 200 && read.json.data[`jws-kubeconfig-${token.id}`] && read;
    });
    const data = (answer.json as ConfigMap).data!;
    expect(verifyClusterInfoSignature(data.kubeconfig!, data[`jws-kubeconfig-${token.id}`]!, token.id, token.secret)).toBe(true);
  });

  it('lets anonymous clients read nothing else in kube-public', async () => {
    await cluster.client.create<ConfigMap>(
      RESOURCES.configmaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'private', namespace: 'kube-public' }, data: { a: '1' } },
      'kube-public',
    );
    expect((await anonymousGet(cluster, '/api/v1/namespaces/kube-public/configmaps/private')).status).toBe(403);
    expect((await anonymousGet(cluster, '/api/v1/namespaces/kube-public/configmaps')).status).toBe(403);
  });

  it("runs its controllers with the controller manager's permissions: the token cleaner deletes", async () => {
    await cluster.client.create<Secret>(
      RESOURCES.secrets,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'bootstrap-token-old001', namespace: 'kube-system' },
        type: 'bootstrap.kubernetes.io/token',
        stringData: { 'token-id': 'old001', 'token-secret': '0123456789abcdef', expiration: '2020-01-01T00:00:00Z' },
      },
      'kube-system',
    );
    await waitFor('the expired token deleted', async () => {
      try {
        await cluster.client.get(RESOURCES.secrets, 'bootstrap-token-old001', 'kube-system');
        return false;
      } catch (err) {
        return isApiError(err, 'NotFound');
      }
    });
  });
});
