import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isApiError, RESOURCES, type CertificateSigningRequest, type KubeObject, type Node, type SubjectAccessReview } from '@skiff/api';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient } from '@skiff/client';
import controllerManager from '@skiff/controller-manager';
import { Kernel, waitFor, type ApiClient } from '@skiff/kernel';
import rbac from '@skiff/plugin-authz-rbac';
import store from '@skiff/store';
import { startControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import csrControllers from './index.js';
import { SIGNER } from './names.js';
import { certificateRequestPem, csrObject, NODE_CLIENT_USAGES, NODE_SERVING_USAGES, type RequestOptions } from './test-support.js';

const CSRS = RESOURCES.certificatesigningrequests;
const NODE = { commonName: 'system:node:n1', organizations: ['system:nodes'] };

/** Who asks, as the authenticators would name them. */
const TRUSTED_BOOTSTRAPPER = { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:trusted', 'system:authenticated'] };
const UNTRUSTED_BOOTSTRAPPER = { username: 'system:bootstrap:zzzzzz', groups: ['system:bootstrappers', 'system:authenticated'] };
const nodeUser = (name: string) => ({ username: `system:node:${name}`, groups: ['system:nodes', 'system:authenticated'] });

const binding = (name: string, clusterRole: string, group: string): KubeObject =>
  ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
  }) as KubeObject;

async function find(client: ApiClient, name: string): Promise<CertificateSigningRequest | undefined> {
  try {
    return await client.get<CertificateSigningRequest>(CSRS, name);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

const issued = (client: ApiClient, name: string) =>
  waitFor(`${name} issued`, async () => {
    const csr = await find(client, name);
    return csr?.status?.certificate ? csr : undefined;
  });

const certificateOf = (csr: CertificateSigningRequest) => new X509Certificate(Buffer.from(csr.status!.certificate!, 'base64'));
const conditionTypes = (csr: CertificateSigningRequest | undefined) => (csr?.status?.conditions ?? []).map((condition) => condition.type);

async function approve(client: ApiClient, name: string, type: 'Approved' | 'Denied' = 'Approved', lastUpdateTime = new Date().toISOString()) {
  const csr = await client.get<CertificateSigningRequest>(CSRS, name);
  const condition = { type, status: 'True', reason: 'ByHand', message: 'decided by a test', lastUpdateTime: lastUpdateTime.replace(/\.\d+Z$/, 'Z') };
  return client.update<CertificateSigningRequest>(CSRS, { ...csr, status: { ...csr.status, conditions: [condition] } }, { subresource: 'approval' });
}

describe('the certificates controllers under RBAC', () => {
  let kernel: Kernel;
  let dataDir: string;
  let admin: ApiClient;
  let caCertificate: X509Certificate;
  const as = (user: { username: string; groups: string[] }) => createLoopbackClient(kernel.resolve('apiHandler'), user);
  const request = (client: ApiClient, name: string, options: RequestOptions, spec: { signerName: string; usages: string[]; expirationSeconds?: number }) => {
    const made = certificateRequestPem(options);
    return client.create<CertificateSigningRequest>(CSRS, csrObject(name, made.pem, spec)).then((csr) => ({ csr, keyPem: made.keyPem }));
  };
  const nodeClient = { signerName: SIGNER.KUBE_APISERVER_CLIENT_KUBELET, usages: NODE_CLIENT_USAGES };
  const nodeServing = { signerName: SIGNER.KUBELET_SERVING, usages: NODE_SERVING_USAGES };

  /** Whether the authorizers let `user` create certificatesigningrequests/<subresource>: bindings take effect once RBAC's cache has them. */
  const may = async (user: { username: string; groups: string[] }, subresource: string) =>
    (
      await admin.create<SubjectAccessReview>(RESOURCES.subjectaccessreviews, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          user: user.username,
          groups: user.groups,
          resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', subresource, verb: 'create' },
        },
      })
    ).status?.allowed;

  async function createNode(name: string, addresses: { type: string; address: string }[]) {
    const created = await admin.create<Node>(RESOURCES.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name } });
    await admin.updateStatus<Node>(RESOURCES.nodes, { ...created, status: { addresses } });
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'skiff-csr-rbac-'));
    kernel = new Kernel({ config: { port: 0, logLevel: 'silent', dataDir, rootDir: dataDir } })
      .use(store)
      .use(apiServer, { port: 0 })
      .use(rbac)
      .use(controllerManager, { resyncMs: 0, enabled: ['*'] })
      .use(csrControllers);
    await kernel.start();
    admin = as({ username: 'root', groups: ['system:masters', 'system:authenticated'] });
    caCertificate = new X509Certificate(kernel.resolve('apiServerInfo').caPem);
    // As kubeadm sets it up: bootstrappers may ask, trusted ones get node client certificates, nodes renew their own.
    await admin.create(RESOURCES.clusterrolebindings, binding('bootstrappers-request', 'system:node-bootstrapper', 'system:bootstrappers'));
    await admin.create(RESOURCES.clusterrolebindings, binding('nodes-request', 'system:node-bootstrapper', 'system:nodes'));
    await admin.create(
      RESOURCES.clusterrolebindings,
      binding('trusted-nodeclient', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', 'system:bootstrappers:trusted'),
    );
    await admin.create(
      RESOURCES.clusterrolebindings,
      binding('nodes-selfnodeclient', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:nodes'),
    );
    await waitFor('the bindings in effect', async () => (await may(TRUSTED_BOOTSTRAPPER, 'nodeclient')) && (await may(nodeUser('n2'), 'selfnodeclient')));
    await createNode('n1', [
      { type: 'InternalIP', address: '10.0.0.1' },
      { type: 'Hostname', address: 'n1.cluster.internal' },
    ]);
  }, 60_000);
  afterAll(async () => {
    await kernel?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("approves a trusted bootstrapper's node client request, then signs it with the cluster CA", async () => {
    const { keyPem } = await request(as(TRUSTED_BOOTSTRAPPER), 'n1-client', NODE, nodeClient);
    const csr = await issued(admin, 'n1-client');
    expect(csr.spec.username).toBe(TRUSTED_BOOTSTRAPPER.username);
    expect(csr.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Approved',
        status: 'True',
        reason: 'AutoApproved',
        message: expect.stringContaining('certificatesigningrequests/nodeclient'),
      }),
    ]);
    const certificate = certificateOf(csr);
    expect(certificate.verify(caCertificate.publicKey)).toBe(true);
    expect(certificate.checkIssued(caCertificate)).toBe(true);
    expect(certificate.checkPrivateKey(createPrivateKey(keyPem))).toBe(true);
    expect(certificate.subject.split('\n').sort()).toEqual(['CN=system:node:n1', 'O=system:nodes']);
    expect(certificate.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(certificate.subjectAltName).toBeUndefined();
  });

  it('approves a node renewing its own client certificate through selfnodeclient', async () => {
    await request(as(nodeUser('n2')), 'n2-renewal', { ...NODE, commonName: 'system:node:n2' }, nodeClient);
    const csr = await issued(admin, 'n2-renewal');
    expect(csr.status?.conditions?.[0]?.message).toContain('certificatesigningrequests/selfnodeclient');
  });

  it('approves a kubelet serving request for names and addresses of its Node, also when the Node comes later', async () => {
    await request(as(nodeUser('n1')), 'n1-serving', { ...NODE, dnsNames: ['n1', 'n1.cluster.internal'], ipAddresses: ['10.0.0.1'] }, nodeServing);
    const certificate = certificateOf(await issued(admin, 'n1-serving'));
    expect(certificate.verify(caCertificate.publicKey)).toBe(true);
    expect(certificate.subjectAltName).toBe('DNS:n1, DNS:n1.cluster.internal, IP Address:10.0.0.1');
    expect(certificate.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);

    await request(as(nodeUser('n3')), 'n3-serving', { ...NODE, commonName: 'system:node:n3', ipAddresses: ['10.0.0.3'] }, nodeServing);
    await createNode('n3', [{ type: 'InternalIP', address: '10.0.0.3' }]);
    await issued(admin, 'n3-serving');
  });

  it('leaves alone what it may not approve: no permission, SANs, a wrong O, another node, a foreign address', async () => {
    const pending = {
      'untrusted-client': () => request(as(UNTRUSTED_BOOTSTRAPPER), 'untrusted-client', NODE, nodeClient),
      'client-with-san': () => request(as(TRUSTED_BOOTSTRAPPER), 'client-with-san', { ...NODE, dnsNames: ['n1'] }, nodeClient),
      'client-as-master': () => request(as(TRUSTED_BOOTSTRAPPER), 'client-as-master', { ...NODE, organizations: ['system:masters'] }, nodeClient),
      'client-for-another-node': () => request(as(nodeUser('n2')), 'client-for-another-node', { ...NODE, commonName: 'system:node:n9' }, nodeClient),
      'serving-foreign-ip': () => request(as(nodeUser('n1')), 'serving-foreign-ip', { ...NODE, ipAddresses: ['10.0.0.1', '10.9.9.9'] }, nodeServing),
      'serving-foreign-name': () => request(as(nodeUser('n1')), 'serving-foreign-name', { ...NODE, dnsNames: ['kubernetes.default'] }, nodeServing),
      'serving-for-another-node': () =>
        request(as(nodeUser('n1')), 'serving-for-another-node', { ...NODE, commonName: 'system:node:n3', ipAddresses: ['10.0.0.3'] }, nodeServing),
      'apiserver-client': () =>
        request(as(TRUSTED_BOOTSTRAPPER), 'apiserver-client', NODE, { signerName: SIGNER.KUBE_APISERVER_CLIENT, usages: ['digital signature', 'client auth'] }),
    };
    for (const create of Object.values(pending)) await create();
    // Queued after all of them: once it is approved, the approver has been through the others.
    await request(as(TRUSTED_BOOTSTRAPPER), 'sentinel', NODE, nodeClient);
    await issued(admin, 'sentinel');
    for (const name of Object.keys(pending)) {
      const csr = await find(admin, name);
      expect({ name, conditions: conditionTypes(csr), certificate: csr?.status?.certificate }).toEqual({ name, conditions: [], certificate: undefined });
    }
  });

  it('signs a kube-apiserver-client request approved by hand, for the time it asks', async () => {
    await request(
      admin,
      'alice',
      { commonName: 'alice', organizations: ['devs'] },
      { signerName: SIGNER.KUBE_APISERVER_CLIENT, usages: ['client auth'], expirationSeconds: 600 },
    );
    await approve(admin, 'alice');
    const asked = Date.now();
    const certificate = certificateOf(await issued(admin, 'alice'));
    expect(certificate.verify(caCertificate.publicKey)).toBe(true);
    expect(certificate.subject.split('\n').sort()).toEqual(['CN=alice', 'O=devs']);
    const notAfter = Date.parse(certificate.validTo);
    expect(notAfter).toBeGreaterThan(asked + 590_000);
    expect(notAfter).toBeLessThan(asked + 630_000);
    expect(Date.parse(certificate.validFrom)).toBeLessThan(asked - 290_000);
  });

  it('marks Failed, instead of signing, an approved request its signer refuses', async () => {
    await request(admin, 'serving-for-alice', { commonName: 'alice', ipAddresses: ['10.0.0.1'] }, nodeServing);
    await approve(admin, 'serving-for-alice');
    const failed = await waitFor('serving-for-alice failed', async () => {
      const csr = await find(admin, 'serving-for-alice');
      return conditionTypes(csr).includes('Failed') && csr;
    });
    expect(failed.status?.conditions?.find((condition) => condition.type === 'Failed')).toMatchObject({
      reason: 'SignerValidationFailure',
      message: expect.stringContaining('organization must be exactly ["system:nodes"]'),
    });
    expect(failed.status?.certificate).toBeUndefined();
  });

  it('cleans up a request denied more than an hour ago', async () => {
    await request(admin, 'denied-long-ago', { commonName: 'bob' }, { signerName: SIGNER.KUBE_APISERVER_CLIENT, usages: ['client auth'] });
    await approve(admin, 'denied-long-ago', 'Denied', new Date(Date.now() - 2 * 3600_000).toISOString());
    await waitFor('denied-long-ago deleted', async () => !(await find(admin, 'denied-long-ago')));
  });
});

describe('the cleaner with short retention', () => {
  it('deletes a denied request once its time is up, and keeps a pending one', async () => {
    const plane = await startControlPlane([[csrControllers, { finishedRetentionSeconds: 1, pendingRetentionSeconds: 3600 }]], {
      enabled: ['csrcleaner'],
      config: { logLevel: 'silent' },
    });
    try {
      const spec = { signerName: SIGNER.KUBE_APISERVER_CLIENT, usages: ['client auth'] };
      for (const name of ['denied', 'pending']) await plane.client.create(CSRS, csrObject(name, certificateRequestPem({ commonName: name }).pem, spec));
      const denied = await approve(plane.client, 'denied', 'Denied');
      await waitFor('denied deleted', async () => !(await find(plane.client, 'denied')));
      expect(Date.now() - Date.parse(denied.status!.conditions![0]!.lastUpdateTime!)).toBeGreaterThanOrEqual(1000);
      expect(await find(plane.client, 'pending')).toBeDefined();
    } finally {
      await plane.stop();
    }
  });
});
