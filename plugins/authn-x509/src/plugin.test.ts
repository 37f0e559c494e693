import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type ConfigMap } from '@skiff/api';
import { issueClientCertificate, readClusterCa } from '@skiff/apiserver';
import { readKubeconfig } from '@skiff/client';
import anonymous from '@skiff/plugin-authn-anonymous';
import tokenFile from '@skiff/plugin-authn-token-file';
import { startControlPlane, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import x509 from './index.js';
import { asClusterCa, fromClusterCa, makeCertificate } from './test-support.js';

interface HttpAnswer {
  status: number;
  json: any;
}

/** `kubectl auth whoami` over the real HTTPS listener, with a client certificate (or a token). */
function whoami(
  plane: ControlPlane,
  credential: { certPem?: string; keyPem?: string; token?: string },
  agent: Agent | false = false,
): Promise<HttpAnswer & { resumed: boolean }> {
  const { url, caPem } = plane.kernel.resolve('apiServerInfo');
  const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      {
        method: 'POST',
        ca: caPem,
        cert: credential.certPem,
        key: credential.keyPem,
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          ...(credential.token ? { authorization: `Bearer ${credential.token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        const resumed = (res.socket as TLSSocket).isSessionReused();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')), resumed }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('with the cluster CA, the admin kubeconfig holding a client certificate', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([tokenFile, [x509, { adminCertificate: true }], anonymous]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('publishes the cluster CA as client-ca-file in kube-system/extension-apiserver-authentication', async () => {
    const configMap = await plane.client.get<ConfigMap>(RESOURCES.configmaps, 'extension-apiserver-authentication', 'kube-system');
    expect(configMap.data?.['client-ca-file']).toBe(readFileSync(join(plane.dataDir, 'pki', 'ca.crt'), 'utf8'));
  });

  it('authenticates a certificate the cluster CA issued as CN / O', async () => {
    const jane = issueClientCertificate(readClusterCa(plane.dataDir), { user: 'jane', groups: ['devs'] });
    const answer = await whoami(plane, jane);
    expect(answer.status).toBe(201);
    expect(answer.json.status.userInfo).toMatchObject({ username: 'jane', groups: ['devs', 'system:authenticated'] });
  });

  it('recognises a client that resumes its TLS session on a new connection', async () => {
    const jane = issueClientCertificate(readClusterCa(plane.dataDir), { user: 'jane' });
    // No keep-alive: each request opens a connection, which resumes the session the agent cached.
    const agent = new Agent({ keepAlive: false, maxCachedSessions: 10, cert: jane.certPem, key: jane.keyPem });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await whoami(plane, jane, agent));
    agent.destroy();
    expect(answers.map(({ status, json }) => `${status} ${json.status.userInfo.username}`)).toEqual(['201 jane', '201 jane', '201 jane']);
    expect(answers.some(({ resumed }) => resumed)).toBe(true);
  });

  it('answers 401, never anonymous, to a certificate of another CA or an expired one', async () => {
    const otherCa = makeCertificate({ cn: 'skiff-ca', isCa: true });
    const foreign = issueClientCertificate(asClusterCa(otherCa), { user: 'mallory', groups: ['system:masters'] });
    const refused = await whoami(plane, foreign);
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({
      kind: 'Status',
      reason: 'Unauthorized',
      message: 'Unauthorized: x509: certificate signed by unknown authority (issuer "CN=skiff-ca")',
    });

    const expired = makeCertificate({
      cn: 'jane',
      issuer: fromClusterCa(readClusterCa(plane.dataDir)),
      extKeyUsage: { clientAuth: true },
      notBefore: new Date(Date.now() - 7200_000),
      notAfter: new Date(Date.now() - 3600_000),
    });
    const stale = await whoami(plane, { certPem: expired.certPem, keyPem: expired.key.keyPem });
    expect(stale.status).toBe(401);
    expect(stale.json.message).toMatch(/^Unauthorized: x509: certificate has expired or is not yet valid: current time .* is after /);

    const serving = makeCertificate({ cn: 'jane', issuer: fromClusterCa(readClusterCa(plane.dataDir)), extKeyUsage: { serverAuth: true } });
    const misused = await whoami(plane, { certPem: serving.certPem, keyPem: serving.key.keyPem });
    expect(misused.status).toBe(401);
    expect(misused.json.message).toMatch(/incompatible key usage/);
  });

  it('writes admin.kubeconfig with the admin client certificate (kubernetes-admin, system:masters), key files 0600', async () => {
    const connection = readKubeconfig(join(plane.dataDir, 'admin.kubeconfig'));
    expect(connection.token).toBeUndefined();
    expect(connection.certPem).toBe(readFileSync(join(plane.dataDir, 'pki', 'admin.crt'), 'utf8'));
    expect(statSync(join(plane.dataDir, 'pki', 'admin.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(plane.dataDir, 'admin.kubeconfig')).mode & 0o777).toBe(0o600);
    const answer = await whoami(plane, connection);
    expect(answer.json.status.userInfo).toMatchObject({ username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] });
  });

  it('leaves token authentication as it was', async () => {
    const token = /^([^,#\s]+),admin,/m.exec(readFileSync(join(plane.dataDir, 'tokens.csv'), 'utf8'))![1];
    const answer = await whoami(plane, { token });
    expect(answer.json.status.userInfo.username).toBe('admin');
  });
});

describe('with clientCaFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-x509-'));
  const teamCa = makeCertificate({ cn: 'team-ca', isCa: true });
  const bundle = join(dir, 'team-ca.crt');
  writeFileSync(bundle, teamCa.certPem);
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([[x509, { clientCaFile: bundle }], anonymous]);
  });
  afterAll(async () => {
    await plane?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes that CA as client-ca-file in kube-system/extension-apiserver-authentication', async () => {
    const configMap = await plane.client.get<ConfigMap>(RESOURCES.configmaps, 'extension-apiserver-authentication', 'kube-system');
    expect(configMap.data?.['client-ca-file']).toBe(teamCa.certPem);
  });

  it("accepts that CA's certificates instead of the cluster CA's", async () => {
    const ana = issueClientCertificate(asClusterCa(teamCa), { user: 'ana', groups: ['team'] });
    expect((await whoami(plane, ana)).json.status.userInfo).toMatchObject({ username: 'ana', groups: ['team', 'system:authenticated'] });
    const clusterIssued = issueClientCertificate(readClusterCa(plane.dataDir), { user: 'jane' });
    const refused = await whoami(plane, clusterIssued);
    expect(refused.status).toBe(401);
    expect(refused.json.message).toBe('Unauthorized: x509: certificate signed by unknown authority (issuer "CN=skiff-ca")');
  });

  it('fails the start with one line for a file that holds no CA, or an admin certificate it would not accept', async () => {
    const empty = join(dir, 'empty.crt');
    writeFileSync(empty, 'nothing\n');
    await expect(startControlPlane([[x509, { clientCaFile: empty }]])).rejects.toThrow(
      `plugin "@skiff/plugin-authn-x509": clientCaFile ${empty}: the CA bundle holds no certificate`,
    );
    await expect(startControlPlane([[x509, { clientCaFile: join(dir, 'missing.crt') }]])).rejects.toThrow(/clientCaFile .*missing\.crt: ENOENT/);
    await expect(startControlPlane([[x509, { clientCaFile: bundle, adminCertificate: true }]])).rejects.toThrow(
      /adminCertificate: the admin certificate, signed by the cluster CA, is not accepted by clientCaFile's CAs/,
    );
  });
});
