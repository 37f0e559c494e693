import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { helmPath, kubectlVersions, pythonWithKubernetes, runProgram, type ProgramResult } from './clients.js';
import { startSkiff, tempDir, type RunningSkiff } from './harness.js';

// The client matrix against one `skiff up`: every kubectl 1.27–1.36, each binary called directly (not the
// dispatcher, which would pick the server's minor), then helm 4 and the Python client. The binaries come from
// clients.ts, which fails naming the install script when one is missing.
//
// kubectl 1.32 and later send protobuf request bodies when they create built-in kinds (including the
// SelfSubjectAccessReview behind `auth can-i`); the server decodes them through the API facts table, so every
// version runs the same writes.
const BOOTSTRAP_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];

const versions = kubectlVersions();
let skiff: RunningSkiff;
const dataDir = tempDir('kubectl-matrix');
const cacheRoot = tempDir('kubectl-matrix-cache');

/** Fails with the command and its output when the exit code is not the one expected. */
function expectExit(result: ProgramResult, code: number, what: string): void {
  if (result.code !== code) throw new Error(`${what} exited ${result.code}, expected ${code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
}

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '0']);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(cacheRoot, { recursive: true, force: true });
});

describe.each(versions)('kubectl 1.$minor', ({ minor, path }) => {
  // Each version gets its own discovery cache, so no version reads what another one cached.
  const cacheDir = join(cacheRoot, `1.${minor}`);
  const kubectl = (...args: string[]) => runProgram(path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, ...args]);

  it('reads: version, namespaces (table and JSON), api-resources, pods in every namespace', async () => {
    const version = await kubectl('version', '-o', 'json');
    expectExit(version, 0, 'version -o json');
    const reported = JSON.parse(version.stdout);
    expect(parseInt(reported.clientVersion.minor, 10)).toBe(minor);
    expect(reported.serverVersion.gitVersion).toMatch(/^v1\.\d+\./);

    const table = await kubectl('get', 'namespaces');
    expectExit(table, 0, 'get namespaces');
    expect(table.stdout).toMatch(/^NAME\s+STATUS\s+AGE/);
    for (const name of BOOTSTRAP_NAMESPACES) expect(table.stdout).toMatch(new RegExp(`^${name}\\s+Active\\s`, 'm'));

    const json = await kubectl('get', 'namespaces', '-o', 'json');
    expectExit(json, 0, 'get namespaces -o json');
    const list = JSON.parse(json.stdout);
    expect(list.kind).toBe('List');
    expect(list.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual(expect.arrayContaining(BOOTSTRAP_NAMESPACES));

    const resources = await kubectl('api-resources');
    expectExit(resources, 0, 'api-resources');
    expect(resources.stdout).toMatch(/^pods\s+po\s+v1\s+true\s+Pod\s*$/m);
    expect(resources.stdout).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace\s*$/m);

    const pods = await kubectl('get', 'pods', '-A');
    expectExit(pods, 0, 'get pods -A');
    // No nodes, so no pods: kubectl says so on stderr.
    expect(pods.stdout + pods.stderr).toMatch(/^NAMESPACE\s+NAME\s|No resources found/m);
  });

  it('auth can-i list pods: yes', async () => {
    const canI = await kubectl('auth', 'can-i', 'list', 'pods');
    expectExit(canI, 0, 'auth can-i list pods');
    expect(canI.stdout.trim()).toBe('yes');
  });

  it('create namespace, then reads it back Active', async () => {
    const name = `matrix-1-${minor}`;
    const created = await kubectl('create', 'namespace', name);
    expectExit(created, 0, `create namespace ${name}`);
    expect(created.stdout.trim()).toBe(`namespace/${name} created`);
    const got = await kubectl('get', 'namespace', name, '-o', 'json');
    expectExit(got, 0, `get namespace ${name}`);
    expect(JSON.parse(got.stdout).status.phase).toBe('Active');
  });

  it('create deployment with replicas and a port, read back field for field', async () => {
    const name = `web-1-${minor}`;
    const created = await kubectl('create', 'deployment', name, '--image=nginx:1.27', '--replicas=2', '--port=80');
    expectExit(created, 0, `create deployment ${name}`);
    expect(created.stdout.trim()).toBe(`deployment.apps/${name} created`);
    const got = await kubectl('get', 'deployment', name, '-o', 'json');
    expectExit(got, 0, `get deployment ${name}`);
    const deployment = JSON.parse(got.stdout);
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.selector.matchLabels).toEqual({ app: name });
    expect(deployment.spec.template.spec.containers[0]).toMatchObject({ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 80 }] });
  });
});

describe('other clients', () => {
  it('helm 4 runs', async () => {
    const helm = await runProgram(helmPath(), ['version', '--short']);
    expectExit(helm, 0, 'helm version --short');
    expect(helm.stdout).toMatch(/^v4\.\d+\.\d+/);
  });

  it('the Python client (python3-kubernetes) lists namespaces through the kubeconfig', async () => {
    const script = [
      'import sys',
      'from kubernetes import client, config',
      'config.load_kube_config(sys.argv[1])',
      'print("\\n".join(sorted(n.metadata.name for n in client.CoreV1Api().list_namespace().items)))',
    ].join('\n');
    const python = await runProgram(pythonWithKubernetes(), ['-c', script, skiff.kubeconfig]);
    expectExit(python, 0, 'python3 list_namespace');
    expect(python.stdout.trim().split('\n')).toEqual(expect.arrayContaining(BOOTSTRAP_NAMESPACES));
  });
});
