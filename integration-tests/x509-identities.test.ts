import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { parse, stringify } from 'yaml';
import { kubectlVersions, runProgram, type ProgramResult } from './clients.js';
import { SKIFF_BIN, startSkiff, tempDir, type RunningSkiff } from './harness.js';

// x509 identities in a real `skiff up` (the dev preset plus @skiff/plugin-authn-x509, the admin kubeconfig
// holding a client certificate), driven by the real kubectl 1.36: users made by `skiff kubeconfig user` are who
// their certificate says, a certificate of another CA or an expired one is a 401, and `--as` / `--as-group`
// impersonate. (The dev preset allows every authenticated user everything, impersonation included; refusals
// of impersonation are tested against the pipeline with a real authorizer, core/apiserver's impersonation.test.ts.)

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('x509-identities');
const cacheDir = tempDir('x509-identities-cache');
const dataDir = join(project, 'data');
let skiff: RunningSkiff;

const kubectl = (kubeconfig: string, ...args: string[]): Promise<ProgramResult> =>
  runProgram(kubectl136.path, ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], { timeoutMs: 60_000 });

/**
 * kubectl as a refused identity: a 401 answer, asked again (up to 3 times) when the connection itself failed. kubectl
 * retries a 401 on the same keep-alive connection, and now and then that connection is gone under it ("server closed
 * idle connection", EOF, reset): a transport hiccup, not the answer under test. Still open: see issue 20's closing note.
 */
async function refused(kubeconfig: string, ...args: string[]): Promise<ProgramResult> {
  let result = await kubectl(kubeconfig, ...args);
  for (let attempt = 1; attempt < 3 && /server closed idle connection|: EOF|connection reset by peer/.test(result.stderr); attempt++)
    result = await kubectl(kubeconfig, ...args);
  return result;
}

async function whoami(kubeconfig: string, ...args: string[]): Promise<{ username: string; groups: string[]; extra?: Record<string, string[]> }> {
  const result = await kubectl(kubeconfig, 'auth', 'whoami', '-o', 'json', ...args);
  if (result.code !== 0) throw new Error(`kubectl auth whoami ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout).status.userInfo;
}

/** `skiff kubeconfig user …` (the real CLI), its output saved owner-only as `<name>.kubeconfig`. */
async function userKubeconfig(name: string, ...args: string[]): Promise<string> {
  const result = await runProgram(process.execPath, [SKIFF_BIN, 'kubeconfig', 'user', '--name', name, '--data-dir', dataDir, ...args], { timeoutMs: 30_000 });
  if (result.code !== 0) throw new Error(`skiff kubeconfig user --name ${name}: ${result.stderr}`);
  const file = join(project, `${name}.kubeconfig`);
  writeFileSync(file, result.stdout, { mode: 0o600 });
  return file;
}

/** A kubeconfig like `base` whose user holds a certificate for `cn` (in system:masters) from a CA made here. */
function foreignKubeconfig(base: string): string {
  const keys = () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    return { privateKey: forge.pki.privateKeyFromPem(privateKey), publicKey: forge.pki.publicKeyFromPem(publicKey), keyPem: privateKey };
  };
  const certificate = (subject: forge.pki.CertificateField[], issuer: forge.pki.CertificateField[], publicKey: forge.pki.PublicKey, extensions: object[]) => {
    const made = forge.pki.createCertificate();
    made.publicKey = publicKey;
    made.serialNumber = `01${randomBytes(8).toString('hex')}`;
    made.validity.notBefore = new Date(Date.now() - 3600_000);
    made.validity.notAfter = new Date(Date.now() + 3600_000);
    made.setSubject(subject);
    made.setIssuer(issuer);
    made.setExtensions(extensions);
    return made;
  };
  // The same name as the cluster's CA: only the signature tells them apart.
  const caName = [{ name: 'commonName', value: 'skiff-ca' }];
  const caKeys = keys();
  const ca = certificate(caName, caName, caKeys.publicKey, [{ name: 'basicConstraints', cA: true, critical: true }]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  const userKeys = keys();
  const leaf = certificate(
    [
      { name: 'organizationName', value: 'system:masters' },
      { name: 'commonName', value: 'mallory' },
    ],
    caName,
    userKeys.publicKey,
    [{ name: 'extKeyUsage', clientAuth: true }],
  );
  leaf.sign(caKeys.privateKey, forge.md.sha256.create());
  const config = parse(readFileSync(base, 'utf8'));
  config.users[0].user = {
    'client-certificate-data': Buffer.from(forge.pki.certificateToPem(leaf)).toString('base64'),
    'client-key-data': Buffer.from(userKeys.keyPem).toString('base64'),
  };
  const file = join(project, 'mallory.kubeconfig');
  writeFileSync(file, stringify(config), { mode: 0o600 });
  return file;
}

beforeAll(async () => {
  writeFileSync(join(project, 'skiff.config.mjs'), `export default { plugins: [['@skiff/plugin-authn-x509', { adminCertificate: true }]] };\n`);
  skiff = await startSkiff(['--data-dir', dataDir], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('x509 client certificates', () => {
  it('gives the admin a system:masters certificate instead of a token, its key owner-only', async () => {
    const kubeconfig = parse(readFileSync(skiff.kubeconfig, 'utf8'));
    expect(Object.keys(kubeconfig.users[0].user).sort()).toEqual(['client-certificate-data', 'client-key-data']);
    expect(statSync(join(dataDir, 'pki', 'admin.key')).mode & 0o777).toBe(0o600);
    expect(statSync(skiff.kubeconfig).mode & 0o777).toBe(0o600);
    expect(await whoami(skiff.kubeconfig)).toMatchObject({ username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] });
    const namespaces = await kubectl(skiff.kubeconfig, 'get', 'namespaces', '-o', 'name');
    expect(namespaces.stdout).toContain('namespace/kube-system');
  });

  it('authenticates a user from `skiff kubeconfig user` as its CN and O, with the certificate as credential id', async () => {
    const jane = await userKubeconfig('jane', '--group', 'devs');
    const user = await whoami(jane);
    expect(user).toEqual({
      username: 'jane',
      groups: ['devs', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^X509SHA256=[0-9a-f]{64}$/)] },
    });
    const created = await kubectl(jane, 'create', 'configmap', 'from-jane', '--from-literal=a=b');
    expect(created.code, created.stderr).toBe(0);
    const table = await kubectl(jane, 'auth', 'whoami');
    expect(table.stdout).toMatch(/Username\s+jane/);
    expect(table.stdout).toMatch(/Groups\s+\[devs system:authenticated\]/);
  });

  it('answers 401 to a certificate of another CA, even one claiming system:masters, and to an expired one', async () => {
    const mallory = await refused(foreignKubeconfig(skiff.kubeconfig), 'get', 'namespaces');
    expect(mallory.code).toBe(1);
    expect(mallory.stderr).toContain(
      'error: You must be logged in to the server (Unauthorized: x509: certificate signed by unknown authority (issuer "CN=skiff-ca"))',
    );

    const shortLived = await userKubeconfig('short-lived', '--expiration-seconds', '2');
    expect((await whoami(shortLived)).username).toBe('short-lived');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const expired = await refused(shortLived, 'get', 'pods');
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(
      /error: You must be logged in to the server \(Unauthorized: x509: certificate has expired or is not yet valid: current time \S+ is after \S+\)/,
    );
  });
});

describe('impersonation', () => {
  it('lets the admin act as a user with groups (--as, --as-group)', async () => {
    expect(await whoami(skiff.kubeconfig, '--as', 'jane', '--as-group', 'devs', '--as-group', 'ops')).toEqual({
      username: 'jane',
      groups: ['devs', 'ops', 'system:authenticated'],
    });
    expect(await whoami(skiff.kubeconfig, '--as', 'system:serviceaccount:default:default')).toEqual({
      username: 'system:serviceaccount:default:default',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    });
    expect(await whoami(skiff.kubeconfig, '--as', 'jane', '--as-uid', 'u-1')).toEqual({ username: 'jane', uid: 'u-1', groups: ['system:authenticated'] });
  });

  it('acts as the impersonated user: anonymous gets what anonymous gets', async () => {
    const anonymous = await kubectl(skiff.kubeconfig, 'get', 'pods', '--as', 'system:anonymous');
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toContain(
      'Error from server (Forbidden): pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
    );
  });

  it('lets kubectl refuse groups without a user before asking the server', async () => {
    const groupsOnly = await kubectl(skiff.kubeconfig, 'get', 'pods', '--as-group', 'devs');
    expect(groupsOnly.code).toBe(1);
    expect(groupsOnly.stderr).toMatch(/without impersonating a user/);
  });
});
