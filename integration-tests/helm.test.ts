import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { helmPath, kubectlVersions, runProgram } from './clients.js';
import { REPO_ROOT, startSkiff, tempDir, type RunningSkiff } from './harness.js';

// helm 4 runs whole release lives with --wait against `skiff up` with a node: the chart `helm create` writes, and a
// chart of ours using Deployments, Services, ServiceAccounts, RBAC, ConfigMaps, Secrets, an Ingress and a CRD with
// a custom resource. Install, upgrade (replicas), rollback, uninstall — and nothing of a release is left.

let skiff: RunningSkiff;
const dataDir = tempDir('helm');
const helmHome = tempDir('helm-home');
const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const OWN_CHART = join(REPO_ROOT, 'integration-tests/fixtures/charts/skiff-demo');

const helm = async (...args: string[]): Promise<string> => {
  const env = ['--kubeconfig', skiff.kubeconfig, '--repository-cache', join(helmHome, 'cache'), '--repository-config', join(helmHome, 'repositories.yaml')];
  const result = await runProgram(helmPath(), [...env, ...args], { timeoutMs: 120_000 });
  if (result.code !== 0) throw new Error(`helm ${args.join(' ')} exited ${result.code}\n${result.stderr}\n${result.stdout}`);
  return result.stdout;
};
const kubectl = async (...args: string[]): Promise<string> => {
  const result = await runProgram(kubectl136.path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', join(helmHome, 'kube-cache'), ...args]);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}\n${result.stderr}`);
  return result.stdout;
};
const replicas = async (namespace: string, deployment: string) =>
  Number(await kubectl('-n', namespace, 'get', 'deployment', deployment, '-o', 'jsonpath={.spec.replicas}'));
/** Everything in the namespace labelled as the release's, of the kinds charts make. */
const releaseObjects = async (namespace: string, release: string, kinds: string) =>
  (await kubectl('-n', namespace, 'get', kinds, '-l', `app.kubernetes.io/instance=${release}`, '-o', 'name')).trim();
const releaseSecrets = async (namespace: string, release: string) =>
  (await kubectl('-n', namespace, 'get', 'secrets', '-l', `owner=helm,name=${release}`, '-o', 'name')).trim();

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '1']);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(helmHome, { recursive: true, force: true });
});

describe('helm 4 with --wait', () => {
  it("runs the life of `helm create`'s starter chart", async () => {
    const charts = join(helmHome, 'charts');
    mkdirSync(charts, { recursive: true });
    await helm('create', join(charts, 'starter'));
    const chart = join(charts, 'starter');
    const ns = ['--namespace', 'starter', '--create-namespace'];
    expect(await helm('install', 'web', chart, ...ns, '--wait', '--timeout', '90s')).toMatch(/STATUS: deployed/);
    expect(await replicas('starter', 'web-starter')).toBe(1);
    expect(await helm('upgrade', 'web', chart, ...ns, '--set', 'replicaCount=3', '--wait', '--timeout', '90s')).toMatch(/has been upgraded/);
    expect(await replicas('starter', 'web-starter')).toBe(3);
    expect(await kubectl('-n', 'starter', 'get', 'deployment', 'web-starter', '-o', 'jsonpath={.status.readyReplicas}')).toBe('3');
    expect(await helm('rollback', 'web', '1', '--namespace', 'starter', '--wait', '--timeout', '90s')).toMatch(/Rollback was a success/);
    expect(await replicas('starter', 'web-starter')).toBe(1);
    expect(await helm('history', 'web', '--namespace', 'starter', '-o', 'json')).toMatch(/"revision":3.*"status":"deployed"/);
    expect(await helm('uninstall', 'web', '--namespace', 'starter', '--wait', '--timeout', '90s')).toMatch(/release "web" uninstalled/);
    expect(await releaseObjects('starter', 'web', 'deployments,replicasets,pods,services,serviceaccounts')).toBe('');
    expect(await releaseSecrets('starter', 'web')).toBe('');
  });

  it('runs the life of a chart with RBAC, config, secrets, an ingress and a CRD', async () => {
    const ns = ['--namespace', 'demo', '--create-namespace'];
    expect(await helm('install', 'shop', OWN_CHART, ...ns, '--wait', '--timeout', '90s')).toMatch(/STATUS: deployed/);
    expect(await kubectl('-n', 'demo', 'get', 'backups', 'shop-demo', '-o', 'jsonpath={.spec.retain}')).toBe('7');
    expect(await kubectl('-n', 'demo', 'get', 'configmap', 'shop-demo', '-o', 'jsonpath={.data.greeting}')).toBe('hello');
    const service = JSON.parse(await kubectl('-n', 'demo', 'get', 'service', 'shop-demo', '-o', 'json'));
    expect(service.spec.clusterIP).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/);

    await helm('upgrade', 'shop', OWN_CHART, ...ns, '--set', 'replicaCount=2', '--set', 'greeting=hi', '--wait', '--timeout', '90s');
    expect(await replicas('demo', 'shop-demo')).toBe(2);
    expect(await kubectl('-n', 'demo', 'get', 'configmap', 'shop-demo', '-o', 'jsonpath={.data.greeting}')).toBe('hi');
    await helm('rollback', 'shop', '1', '--namespace', 'demo', '--wait', '--timeout', '90s');
    expect(await replicas('demo', 'shop-demo')).toBe(1);
    expect(await kubectl('-n', 'demo', 'get', 'configmap', 'shop-demo', '-o', 'jsonpath={.data.greeting}')).toBe('hello');

    await helm('uninstall', 'shop', '--namespace', 'demo', '--wait', '--timeout', '90s');
    const kinds = 'deployments,replicasets,pods,services,serviceaccounts,roles,rolebindings,configmaps,secrets,ingresses,backups';
    expect(await releaseObjects('demo', 'shop', kinds)).toBe('');
    expect(await releaseSecrets('demo', 'shop')).toBe('');
    // Helm leaves the CRDs of a chart's crds/ folder in place, by design.
    expect((await kubectl('get', 'crd', 'backups.demo.skiff.dev', '-o', 'name')).trim()).toBe(
      'customresourcedefinition.apiextensions.k8s.io/backups.demo.skiff.dev',
    );
  });
});
