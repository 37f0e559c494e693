import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions, runProgram, type ProgramResult } from './clients.js';
import { CLUSTER_TIMEOUT, SKIFF_BIN, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The Node authorizer and NodeRestriction in a real `skiff up`: the dev preset with always-allow replaced by
// @skiff/plugin-authz-node and @skiff/plugin-authz-rbac, x509 client certificates and NodeRestriction, two nodes.
// The in-process kubelets (system:node:node-1 and node-2) run a pod with Secret and ConfigMap volumes, environment
// references, a pull secret and the ServiceAccount token without one refusal. Then the real kubectl 1.36, holding a
// certificate for system:node:node-1 (group system:nodes) from `skiff kubeconfig user`: it reads what its pod uses,
// and is refused a Secret no pod uses, a Secret of node-2's pod and a list of Secrets, in kube-apiserver's words;
// access follows pods as they come and go; NodeRestriction refuses changes to node-2, restricted labels, pods that
// are not its own mirror pods, and tokens not bound to its own pods.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('node-authorization');
const cacheDir = tempDir('node-authorization-cache');
const dataDir = join(project, 'data');
let skiff: RunningSkiff;
const admin = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);
const kubeconfigs: Record<string, string> = {};

const CONFIG = `export default {
  preset: 'dev',
  nodes: 2,
  plugins: [
    ['@skiff/plugin-authz-always-allow', false],
    '@skiff/plugin-authn-x509',
    '@skiff/plugin-authz-node',
    '@skiff/plugin-authz-rbac',
    '@skiff/plugin-admission-node-restriction',
  ],
};
`;

/** kubectl as `node` (node-1, node-2), with the certificate `skiff kubeconfig user` issued it. */
const asNode = (node: string, ...args: string[]): Promise<ProgramResult> =>
  runProgram(kubectl136.path, ['--kubeconfig', kubeconfigs[node]!, '--cache-dir', cacheDir, ...args], { timeoutMs: 60_000 });

async function nodeOk(node: string, ...args: string[]): Promise<string> {
  const result = await asNode(node, ...args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} as ${node} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

async function nodeRefused(node: string, ...args: string[]): Promise<string> {
  const result = await asNode(node, ...args);
  expect(result.code, `kubectl ${args.join(' ')} as ${node} should fail; stdout: ${result.stdout}`).not.toBe(0);
  return result.stderr.trim();
}

const forbiddenRead = (node: string, verb: string, name: string, reason: string) =>
  `Error from server (Forbidden): secrets${name ? ` "${name}"` : ''} is forbidden: User "system:node:${node}" cannot ${verb} resource "secrets" in API group "" in the namespace "default": ${reason}`;

const podManifest = (name: string, nodeName: string, spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName, containers: [{ name: 'app', image: 'nginx' }], ...spec } });

/** node-1's pod: a Secret and a ConfigMap as volumes, a Secret and the ConfigMap in its environment, a pull secret. */
const APP = podManifest('app', 'node-1', {
  imagePullSecrets: [{ name: 'regcred' }],
  containers: [
    {
      name: 'app',
      image: 'nginx',
      env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'token' } } }],
      envFrom: [{ configMapRef: { name: 'app-settings' } }],
      volumeMounts: [
        { name: 'creds', mountPath: '/creds' },
        { name: 'settings', mountPath: '/settings' },
      ],
    },
  ],
  volumes: [
    { name: 'creds', secret: { secretName: 'app-creds' } },
    { name: 'settings', configMap: { name: 'app-settings' } },
  ],
});

beforeAll(async () => {
  writeFileSync(join(project, 'skiff.config.mjs'), CONFIG);
  skiff = await startSkiff(['--data-dir', dataDir], { cwd: project });
  for (const node of ['node-1', 'node-2']) {
    const issued = await runProgram(
      process.execPath,
      [SKIFF_BIN, 'kubeconfig', 'user', '--name', `system:node:${node}`, '--group', 'system:nodes', '--data-dir', dataDir],
      { timeoutMs: 30_000 },
    );
    if (issued.code !== 0) throw new Error(`skiff kubeconfig user: ${issued.stderr}`);
    kubeconfigs[node] = join(project, `${node}.kubeconfig`);
    writeFileSync(kubeconfigs[node], issued.stdout, { mode: 0o600 });
  }
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('the Node authorizer and NodeRestriction through kubectl 1.36', () => {
  it('runs a pod with Secret and ConfigMap volumes, environment references and a pull secret: the kubelets are never refused', async () => {
    await waitFor('the default ServiceAccount', () => admin.ok('get', 'serviceaccount', 'default'), CLUSTER_TIMEOUT);
    await admin.ok('create', 'secret', 'generic', 'app-creds', '--from-literal=password=s3cret');
    await admin.ok('create', 'secret', 'generic', 'env-secret', '--from-literal=token=abc');
    await admin.ok('create', 'secret', 'generic', 'unused', '--from-literal=x=y');
    await admin.ok('create', 'secret', 'generic', 'other-creds', '--from-literal=x=z');
    await admin.ok('create', 'secret', 'docker-registry', 'regcred', '--docker-server=registry.example.com', '--docker-username=u', '--docker-password=p');
    await admin.ok('create', 'configmap', 'app-settings', '--from-literal=mode=fast');
    await admin.apply(APP);
    await admin.apply(podManifest('other', 'node-2', { volumes: [{ name: 'creds', secret: { secretName: 'other-creds' } }] }));
    for (const name of ['app', 'other'])
      await waitFor(`${name} running`, async () => (await admin.json('get', 'pod', name)).status.phase === 'Running', CLUSTER_TIMEOUT);
    const events = await admin.json('get', 'events', '--field-selector', 'type=Warning');
    expect((events.items as any[]).filter((event) => event.reason !== 'MissingClusterDNS').map((event) => `${event.reason}: ${event.message}`)).toEqual([]);
    expect(skiff.stderr()).not.toMatch(/forbidden/i);
  });

  it('lets node-1 read what its pod uses, and see nodes and pods', async () => {
    expect(await nodeOk('node-1', 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}')).toBe(
      'system:node:node-1 ["system:nodes","system:authenticated"]',
    );
    for (const secret of ['app-creds', 'env-secret', 'regcred'])
      expect((await nodeOk('node-1', 'get', 'secret', secret, '-o', 'name')).trim()).toBe(`secret/${secret}`);
    expect(JSON.parse(await nodeOk('node-1', 'get', 'secret', 'app-creds', '-o', 'json')).data.password).toBe(Buffer.from('s3cret').toString('base64'));
    expect((await nodeOk('node-1', 'get', 'configmap', 'app-settings', '-o', 'name')).trim()).toBe('configmap/app-settings');
    expect((await nodeOk('node-1', 'get', 'configmap', 'kube-root-ca.crt', '-o', 'name')).trim()).toBe('configmap/kube-root-ca.crt');
    expect(await nodeOk('node-1', 'get', 'nodes', '-o', 'name')).toBe('node/node-1\nnode/node-2\n');
    expect(await nodeOk('node-1', 'get', 'pods', '-o', 'name')).toBe('pod/app\npod/other\n');
    expect((await nodeOk('node-1', 'auth', 'can-i', 'get', 'secret/app-creds')).trim()).toBe('yes');
  });

  it('refuses node-1 a Secret no pod uses, a Secret of node-2’s pod, and a list of Secrets', async () => {
    expect(await nodeRefused('node-1', 'get', 'secret', 'unused')).toBe(
      forbiddenRead('node-1', 'get', 'unused', "no relationship found between node 'node-1' and this object"),
    );
    expect(await nodeRefused('node-1', 'get', 'secret', 'other-creds')).toBe(
      forbiddenRead('node-1', 'get', 'other-creds', "no relationship found between node 'node-1' and this object"),
    );
    expect(await nodeRefused('node-1', 'get', 'secrets')).toMatch(
      /^Error from server \(Forbidden\): secrets is forbidden: User "system:node:node-1" cannot list resource "secrets"/,
    );
    expect(await nodeRefused('node-1', 'delete', 'secret', 'app-creds')).toMatch(/cannot delete resource "secrets"/);
    expect((await asNode('node-1', 'auth', 'can-i', 'get', 'secret/unused')).stdout.trim()).toBe(
      "no - no relationship found between node 'node-1' and this object",
    );
    // node-2 is the mirror image: its own pod's Secret, not node-1's.
    expect((await nodeOk('node-2', 'get', 'secret', 'other-creds', '-o', 'name')).trim()).toBe('secret/other-creds');
    expect(await nodeRefused('node-2', 'get', 'secret', 'app-creds')).toBe(
      forbiddenRead('node-2', 'get', 'app-creds', "no relationship found between node 'node-2' and this object"),
    );
  });

  it('follows pods: a new pod’s Secret is readable at once, a deleted pod’s no longer', async () => {
    await admin.ok('create', 'secret', 'generic', 'late', '--from-literal=x=1');
    await admin.apply(podManifest('late', 'node-1', { volumes: [{ name: 'late', secret: { secretName: 'late' } }] }));
    expect((await nodeOk('node-1', 'get', 'secret', 'late', '-o', 'name')).trim()).toBe('secret/late');
    await admin.ok('delete', 'pod', 'late', '--wait=true');
    await waitFor('the Secret of the deleted pod to be refused', async () => (await asNode('node-1', 'get', 'secret', 'late')).code !== 0, CLUSTER_TIMEOUT);
    expect(await nodeRefused('node-1', 'get', 'secret', 'late')).toBe(
      forbiddenRead('node-1', 'get', 'late', "no relationship found between node 'node-1' and this object"),
    );
  });

  it('gives node-1 ServiceAccount tokens bound to its own pods only', async () => {
    const uid = (await admin.json('get', 'pod', 'app')).metadata.uid as string;
    const token = await nodeOk('node-1', 'create', 'token', 'default', '--bound-object-kind=Pod', '--bound-object-name=app', `--bound-object-uid=${uid}`);
    expect(token.trim()).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(await nodeRefused('node-1', 'create', 'token', 'default')).toBe(
      'error: failed to create token: serviceaccounts "default" is forbidden: node requested token not bound to a pod',
    );
    const otherUid = (await admin.json('get', 'pod', 'other')).metadata.uid as string;
    expect(
      await nodeRefused('node-1', 'create', 'token', 'default', '--bound-object-kind=Pod', '--bound-object-name=other', `--bound-object-uid=${otherUid}`),
    ).toBe('error: failed to create token: serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node');
  });

  it('refuses node-1 changes to node-2 and restricted labels on itself, and lets it label itself otherwise', async () => {
    expect(await nodeRefused('node-1', 'label', 'node', 'node-2', 'team=a')).toBe(
      'Error from server (Forbidden): nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"',
    );
    expect(await nodeRefused('node-1', 'annotate', 'node', 'node-2', 'note=x')).toMatch(/node "node-1" is not allowed to modify node "node-2"/);
    expect(await nodeRefused('node-1', 'label', 'node', 'node-1', 'node-restriction.kubernetes.io/trusted=yes')).toBe(
      'Error from server (Forbidden): nodes "node-1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/trusted',
    );
    expect(await nodeRefused('node-1', 'taint', 'node', 'node-1', 'dedicated=gpu:NoSchedule')).toMatch(/node "node-1" is not allowed to modify taints/);
    expect((await nodeOk('node-1', 'label', 'node', 'node-1', 'example.com/disk=ssd')).trim()).toBe('node/node-1 labeled');
    // The administrator may do what the node may not.
    expect((await admin.ok('label', 'node', 'node-1', 'node-restriction.kubernetes.io/trusted=yes')).trim()).toBe('node/node-1 labeled');
  });

  it('refuses node-1 pods that are not its own mirror pods, and deleting node-2’s pods', async () => {
    const sneaky = await runProgram(kubectl136.path, ['--kubeconfig', kubeconfigs['node-1']!, '--cache-dir', cacheDir, 'create', '-f', '-'], {
      input: podManifest('sneaky', 'node-1', {}),
    });
    expect(sneaky.stderr.trim()).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "sneaky" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node-1" can only create mirror pods',
    );
    expect(await nodeRefused('node-1', 'delete', 'pod', 'other')).toBe(
      'Error from server (Forbidden): pods "other" is forbidden: node "node-1" can only delete pods with spec.nodeName set to itself',
    );
    expect((await admin.json('get', 'pod', 'other')).status.phase).toBe('Running');
  });
});
