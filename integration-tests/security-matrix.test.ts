import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import forge from 'node-forge';
import { parse, stringify } from 'yaml';
import { kubectlVersions, runProgram, type ProgramResult } from './clients.js';
import { CLUSTER_TIMEOUT, SKIFF_BIN, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The standard preset against a matrix of identities, each with real credentials, driven by the real kubectl 1.36:
// the admin's system:masters certificate, a namespaced editor and a viewer (certificates from `skiff kubeconfig
// user`, bound to the default edit and view roles), a node (system:node:node-1 in system:nodes, Node authorizer),
// a ServiceAccount token from `kubectl create token`, anonymous, a forged token and a certificate from another CA.
// Every cell is a real request; allowed ones must succeed, denied ones must answer 403 (or 401 for credentials
// nobody recognises) — and nothing else.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('security-matrix');
const cacheDir = tempDir('security-matrix-cache');
const dataDir = join(project, 'data');
let skiff: RunningSkiff;

const run = (kubeconfig: string, args: string[], input?: string): Promise<ProgramResult> =>
  runProgram(kubectl136.path, ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], { ...(input !== undefined ? { input } : {}), timeoutMs: 60_000 });
const admin = (...args: string[]) => run(skiff.kubeconfig, args);
async function adminOk(...args: string[]): Promise<string> {
  const result = await admin(...args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}
const adminApply = async (manifest: string) => {
  const result = await run(skiff.kubeconfig, ['apply', '-f', '-'], manifest);
  if (result.code !== 0) throw new Error(`apply: ${result.stderr}`);
};

/** A kubeconfig with the admin's cluster and CA but the given user entry. */
function kubeconfigWithUser(name: string, user: Record<string, unknown>): string {
  const base = parse(readFileSync(skiff.kubeconfig, 'utf8'));
  base.users = [{ name: 'u', user }];
  base.contexts = [{ name: 'c', context: { cluster: base.clusters[0].name, user: 'u' } }];
  base['current-context'] = 'c';
  const file = join(project, `${name}.kubeconfig`);
  writeFileSync(file, stringify(base), { mode: 0o600 });
  return file;
}

async function skiffKubeconfigUser(name: string, ...groups: string[]): Promise<string> {
  const args = ['kubeconfig', 'user', '--name', name, '--data-dir', dataDir, ...groups.flatMap((group) => ['--group', group])];
  const result = await runProgram(SKIFF_BIN, args, { timeoutMs: 30_000 });
  if (result.code !== 0) throw new Error(`skiff ${args.join(' ')}: ${result.stderr}`);
  const file = join(project, `${name.replace(/:/g, '_')}.kubeconfig`);
  writeFileSync(file, result.stdout, { mode: 0o600 });
  return file;
}

/** A client certificate and key signed by a CA the cluster has never seen. */
function foreignCertificate(): { cert: string; key: string } {
  const keys = () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    return { privateKey: forge.pki.privateKeyFromPem(privateKey), publicKey: forge.pki.publicKeyFromPem(publicKey), pem: privateKey };
  };
  const caKeys = keys();
  const ca = forge.pki.createCertificate();
  ca.publicKey = caKeys.publicKey;
  ca.serialNumber = '01';
  ca.validity.notBefore = new Date(Date.now() - 60_000);
  ca.validity.notAfter = new Date(Date.now() + 86_400_000);
  ca.setSubject([{ name: 'commonName', value: 'another-ca' }]);
  ca.setIssuer([{ name: 'commonName', value: 'another-ca' }]);
  ca.setExtensions([{ name: 'basicConstraints', cA: true }]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  const userKeys = keys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = userKeys.publicKey;
  cert.serialNumber = '02';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([
    { name: 'commonName', value: 'kubernetes-admin' },
    { name: 'organizationName', value: 'system:masters' },
  ]);
  cert.setIssuer(ca.subject.attributes);
  cert.setExtensions([{ name: 'extKeyUsage', clientAuth: true }]);
  cert.sign(caKeys.privateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: userKeys.pem };
}

type Outcome = 'allow' | 'deny' | 'unauthorized';
type Identity = 'admin' | 'editor' | 'viewer' | 'node' | 'serviceaccount' | 'anonymous' | 'forged' | 'foreign-ca';
const kubeconfigs = {} as Record<Exclude<Identity, 'anonymous'>, string>;

beforeAll(async () => {
  skiff = await startSkiff(['--preset', 'standard', '--data-dir', dataDir], { cwd: project });
  await adminOk('create', 'namespace', 'team-a');
  await adminOk('create', 'namespace', 'team-b');
  for (const ns of ['team-a', 'team-b']) {
    await adminOk('-n', ns, 'create', 'secret', 'generic', 'db', '--from-literal=password=s3cret');
    await adminOk('-n', ns, 'create', 'configmap', 'settings', '--from-literal=mode=fast');
  }
  await adminOk('-n', 'team-a', 'create', 'secret', 'generic', 'unused', '--from-literal=x=y');
  await adminOk('-n', 'team-a', 'create', 'rolebinding', 'editor', '--clusterrole=edit', '--user=erin');
  await adminOk('-n', 'team-a', 'create', 'rolebinding', 'viewer', '--clusterrole=view', '--user=victor');
  await adminOk('-n', 'team-a', 'create', 'serviceaccount', 'robot');
  // A pod on node-1 that uses team-a/db: the node may read that Secret, and no other.
  await adminApply(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'uses-db', namespace: 'team-a' },
      spec: {
        nodeName: 'node-1',
        containers: [{ name: 'c', image: 'busybox', securityContext: { allowPrivilegeEscalation: false } }],
        volumes: [{ name: 'db', secret: { secretName: 'db' } }],
      },
    }),
  );
  kubeconfigs.admin = skiff.kubeconfig;
  kubeconfigs.editor = await skiffKubeconfigUser('erin', 'developers');
  kubeconfigs.viewer = await skiffKubeconfigUser('victor');
  kubeconfigs.node = await skiffKubeconfigUser('system:node:node-1', 'system:nodes');
  const token = (await adminOk('-n', 'team-a', 'create', 'token', 'robot')).trim();
  kubeconfigs.serviceaccount = kubeconfigWithUser('robot', { token });
  kubeconfigs.forged = kubeconfigWithUser('forged', { token: `${randomBytes(12).toString('hex')}.${randomBytes(24).toString('base64url')}` });
  const foreign = foreignCertificate();
  kubeconfigs['foreign-ca'] = kubeconfigWithUser('foreign', {
    'client-certificate-data': Buffer.from(foreign.cert).toString('base64'),
    'client-key-data': Buffer.from(foreign.key).toString('base64'),
  });
}, 180_000);

afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

/** One request per cell; names are unique so creates never collide. */
let serial = 0;
const requests: Record<string, () => string[]> = {
  'get pods team-a': () => ['-n', 'team-a', 'get', 'pods'],
  'get pods team-b': () => ['-n', 'team-b', 'get', 'pods'],
  'get pods all namespaces': () => ['get', 'pods', '-A'],
  'create configmap team-a': () => ['-n', 'team-a', 'create', 'configmap', `c${++serial}`],
  'create configmap team-b': () => ['-n', 'team-b', 'create', 'configmap', `c${++serial}`],
  'get secret team-a/db': () => ['-n', 'team-a', 'get', 'secret', 'db'],
  'get secret team-a/unused': () => ['-n', 'team-a', 'get', 'secret', 'unused'],
  'get secret team-b/db': () => ['-n', 'team-b', 'get', 'secret', 'db'],
  'list secrets all namespaces': () => ['get', 'secrets', '-A'],
  'create deployment team-a': () => ['-n', 'team-a', 'create', 'deployment', `d${++serial}`, '--image=busybox'],
  'get node node-1': () => ['get', 'node', 'node-1'],
  'create namespace': () => ['create', 'namespace', `ns${++serial}`],
  'delete namespace team-b': () => ['delete', 'namespace', 'team-b', '--dry-run=server'],
  'create clusterrolebinding': () => ['create', 'clusterrolebinding', `crb${++serial}`, '--clusterrole=cluster-admin', '--user=mallory'],
  'get /healthz': () => ['get', '--raw', '/healthz'],
};

const A = 'allow' as const;
const D = 'deny' as const;
const U = 'unauthorized' as const;
// prettier-ignore
const expected: Record<Identity, Outcome[]> = {
  //                get a  get b  get all cm a  cm b  sec db sec un sec b list s dep a  node   ns     del ns crb    healthz
  admin:          [A,     A,     A,      A,    A,    A,     A,     A,     A,     A,     A,     A,     A,     A,     A],
  editor:         [A,     D,     D,      A,    D,    A,     A,     D,     D,     A,     D,     D,     D,     D,     A],
  viewer:         [A,     D,     D,      D,    D,    D,     D,     D,     D,     D,     D,     D,     D,     D,     A],
  node:           [A,     A,     A,      D,    D,    A,     D,     D,     D,     D,     A,     D,     D,     D,     A],
  serviceaccount: [D,     D,     D,      D,    D,    D,     D,     D,     D,     D,     D,     D,     D,     D,     A],
  anonymous:      [D,     D,     D,      D,    D,    D,     D,     D,     D,     D,     D,     D,     D,     D,     A],
  forged:         [U,     U,     U,      U,    U,    U,     U,     U,     U,     U,     U,     U,     U,     U,     U],
  'foreign-ca':   [U,     U,     U,      U,    U,    U,     U,     U,     U,     U,     U,     U,     U,     U,     U],
};

// kubectl cannot send a request without credentials: with an empty user it prompts for a password. Anonymous
// requests go over HTTPS directly, the same requests as the kubectl commands above.
const anonymousRequests: Record<string, [string, string, object?]> = {
  'get pods team-a': ['GET', '/api/v1/namespaces/team-a/pods'],
  'get pods team-b': ['GET', '/api/v1/namespaces/team-b/pods'],
  'get pods all namespaces': ['GET', '/api/v1/pods'],
  'create configmap team-a': ['POST', '/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'anon' } }],
  'create configmap team-b': ['POST', '/api/v1/namespaces/team-b/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'anon' } }],
  'get secret team-a/db': ['GET', '/api/v1/namespaces/team-a/secrets/db'],
  'get secret team-a/unused': ['GET', '/api/v1/namespaces/team-a/secrets/unused'],
  'get secret team-b/db': ['GET', '/api/v1/namespaces/team-b/secrets/db'],
  'list secrets all namespaces': ['GET', '/api/v1/secrets'],
  'create deployment team-a': [
    'POST',
    '/apis/apps/v1/namespaces/team-a/deployments',
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'anon' } },
  ],
  'get node node-1': ['GET', '/api/v1/nodes/node-1'],
  'create namespace': ['POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'anon' } }],
  'delete namespace team-b': ['DELETE', '/api/v1/namespaces/team-b?dryRun=All'],
  'create clusterrolebinding': [
    'POST',
    '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'anon' } },
  ],
  'get /healthz': ['GET', '/healthz'],
};

async function anonymous(name: string): Promise<Outcome | string> {
  const [method, path, body] = anonymousRequests[name]!;
  const ca = parse(readFileSync(skiff.kubeconfig, 'utf8')).clusters[0].cluster['certificate-authority-data'];
  const status = await new Promise<number>((resolve, reject) => {
    const request = httpsRequest(
      `${skiff.server}${path}`,
      { method, ca: Buffer.from(ca, 'base64'), headers: { 'content-type': 'application/json' } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(body ? JSON.stringify(body) : undefined);
  });
  if (status < 300) return 'allow';
  if (status === 403) return 'deny';
  if (status === 401) return 'unauthorized';
  return `HTTP ${status}`;
}

function outcomeOf(result: ProgramResult): Outcome | string {
  if (result.code === 0) return 'allow';
  if (/\(Forbidden\)|is forbidden|forbidden:/.test(result.stderr)) return 'deny';
  if (/Unauthorized|provide credentials/.test(result.stderr)) return 'unauthorized';
  return `exit ${result.code}: ${result.stderr.trim().split('\n').at(-1)}`;
}

describe('the standard preset: identities × verbs × resources through kubectl 1.36', () => {
  const names = Object.keys(requests);
  for (const identity of Object.keys(expected) as Identity[]) {
    it(`${identity}: every allow and every deny`, async () => {
      const got: Record<string, Outcome | string> = {};
      const want: Record<string, Outcome> = {};
      for (const [index, name] of names.entries()) {
        got[name] = identity === 'anonymous' ? await anonymous(name) : outcomeOf(await run(kubeconfigs[identity], requests[name]!()));
        want[name] = expected[identity][index]!;
      }
      expect(got).toEqual(want);
    });
  }

  it('whoami names each identity as the API server sees it', async () => {
    const whoami = async (identity: keyof typeof kubeconfigs) =>
      JSON.parse((await run(kubeconfigs[identity], ['auth', 'whoami', '-o', 'json'])).stdout).status.userInfo;
    expect(await whoami('admin')).toMatchObject({ groups: expect.arrayContaining(['system:masters', 'system:authenticated']) });
    expect(await whoami('editor')).toMatchObject({ username: 'erin', groups: ['developers', 'system:authenticated'] });
    expect(await whoami('node')).toMatchObject({ username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'] });
    expect(await whoami('serviceaccount')).toMatchObject({ username: 'system:serviceaccount:team-a:robot' });
  });

  it('can-i answers from the same chain, --list included', async () => {
    const canI = async (identity: keyof typeof kubeconfigs, ...args: string[]) => (await run(kubeconfigs[identity], ['auth', 'can-i', ...args])).stdout.trim();
    expect(await canI('editor', 'create', 'deployments', '-n', 'team-a')).toBe('yes');
    expect(await canI('editor', 'create', 'deployments', '-n', 'team-b')).toBe('no');
    expect(await canI('viewer', 'delete', 'pods', '-n', 'team-a')).toBe('no');
    const list = await canI('viewer', '--list', '-n', 'team-a');
    expect(list).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    expect(list).not.toMatch(/^secrets\s/m);
  });

  it('writes an audit log and keeps Secret values out of the store files', async () => {
    const audit = join(dataDir, 'audit.log');
    await waitFor('the audit log to name erin', () => readFileSync(audit, 'utf8').includes('"username":"erin"'), CLUSTER_TIMEOUT);
    expect(statSync(audit).mode & 0o777).toBe(0o600);
    const line = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((event) => event.user?.username === 'erin');
    expect(line).toMatchObject({ kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Metadata', stage: 'ResponseComplete' });
    const bytes = Buffer.concat(readdirSync(join(dataDir, 'store')).map((file) => readFileSync(join(dataDir, 'store', file))));
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.includes('s3cret')).toBe(false);
    expect(bytes.includes(Buffer.from('s3cret').toString('base64'))).toBe(false);
    expect(bytes.includes('k8s:enc:aesgcm:v1:key1:')).toBe(true);
  });
});
