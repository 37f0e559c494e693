import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// Pod Security admission (@skiff/plugin-admission-pod-security) in a real `skiff up`, driven by the real kubectl
// 1.36: namespace labels enforce, warn and pin versions; refusals and warnings reach kubectl's stderr in
// kube-apiserver's words; workloads are warned about, never refused, while the pods their controllers make are.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('pod-security');
const cacheDir = tempDir('pod-security-cache');
let skiff: RunningSkiff;
const { kubectl, ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

beforeAll(async () => {
  writeFileSync(join(project, 'skiff.config.mjs'), "export default { plugins: ['@skiff/plugin-admission-pod-security'] };\n");
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const RESTRICTED_DETAIL = (container: string) =>
  `allowPrivilegeEscalation != false (container "${container}" must set securityContext.allowPrivilegeEscalation=false), ` +
  `unrestricted capabilities (container "${container}" must set securityContext.capabilities.drop=["ALL"]), ` +
  `runAsNonRoot != true (pod or container "${container}" must set securityContext.runAsNonRoot=true), ` +
  `seccompProfile (pod or container "${container}" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`;

const restrictedPod = (name: string, namespace: string) => `
apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: RuntimeDefault } }
  containers:
  - name: app
    image: nginx
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
`;

/** kubectl's stderr lines that are warnings. */
const warningsIn = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('Warning: '));

describe('Pod Security admission through kubectl 1.36', () => {
  it('warns, when labelling a namespace enforce=restricted, about the pods already there', async () => {
    await ok('create', 'namespace', 'locked');
    await ok('run', 'old-priv', '-n', 'locked', '--image=nginx', '--privileged');
    const labelled = await kubectl(['label', 'namespace', 'locked', 'pod-security.kubernetes.io/enforce=restricted']);
    expect(labelled.code).toBe(0);
    expect(labelled.stdout.trim()).toBe('namespace/locked labeled');
    expect(warningsIn(labelled.stderr)).toEqual([
      'Warning: existing pods in namespace "locked" violate the new PodSecurity enforce level "restricted:latest"',
      'Warning: old-priv: privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    ]);
  });

  it('refuses a privileged pod with the exact upstream message', async () => {
    const refused = await kubectl(['run', 'priv', '-n', 'locked', '--image=nginx', '--privileged']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "priv" is forbidden: violates PodSecurity "restricted:latest": ' +
        `privileged (container "priv" must not set securityContext.privileged=true), ${RESTRICTED_DETAIL('priv')}`,
    );
    const gone = await kubectl(['get', 'pod', 'priv', '-n', 'locked']);
    expect(gone.stderr).toContain('pods "priv" not found');
  });

  it('admits a pod that meets restricted, with no warning', async () => {
    const created = await kubectl(['apply', '-f', '-'], restrictedPod('hardened', 'locked'));
    expect(created.code).toBe(0);
    expect(created.stdout.trim()).toBe('pod/hardened created');
    expect(warningsIn(created.stderr)).toEqual([]);
    expect((await json('get', 'pod', 'hardened', '-n', 'locked')).metadata.uid).toBeTruthy();
  });

  it('checks ephemeral containers `kubectl debug` adds: the general profile is refused, the restricted one admitted', async () => {
    const general = await kubectl(['debug', '-n', 'locked', 'hardened', '--image=busybox', '--profile=general', '-c', 'dbg', '--', 'true']);
    expect(general.code).not.toBe(0);
    expect(general.stderr).toContain(
      'Error from server (Forbidden): pods "hardened" is forbidden: violates PodSecurity "restricted:latest": ' +
        'allowPrivilegeEscalation != false (container "dbg" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "dbg" must set securityContext.capabilities.drop=["ALL"]; container "dbg" must not include "SYS_PTRACE" in securityContext.capabilities.add)',
    );
    const restricted = await kubectl(['debug', '-n', 'locked', 'hardened', '--image=busybox', '--profile=restricted', '-c', 'dbg2', '--', 'true']);
    expect(restricted.code).toBe(0);
    const names = (await json('get', 'pod', 'hardened', '-n', 'locked')).spec.ephemeralContainers.map((c: any) => c.name);
    expect(names).toEqual(['dbg2']);
  });

  it('creates a Deployment with a warning, and its ReplicaSet cannot make its pods', async () => {
    const created = await kubectl(['create', 'deployment', 'web', '-n', 'locked', '--image=nginx']);
    expect(created.code).toBe(0);
    expect(created.stdout.trim()).toBe('deployment.apps/web created');
    expect(warningsIn(created.stderr)).toEqual([`Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL('nginx')}`]);
    const failure = await waitFor(
      'the ReplicaSet to report FailedCreate',
      async () => {
        const sets = await json('get', 'replicasets', '-n', 'locked', '-l', 'app=web');
        return sets.items[0]?.status?.conditions?.find((c: any) => c.type === 'ReplicaFailure');
      },
      CLUSTER_TIMEOUT,
    );
    expect(failure.reason).toBe('FailedCreate');
    expect(failure.message).toMatch(new RegExp(`^pods "web-[a-z0-9]+-[a-z0-9]{5}" is forbidden: violates PodSecurity "restricted:latest": `));
    expect(failure.message).toContain(RESTRICTED_DETAIL('nginx'));
    expect((await json('get', 'pods', '-n', 'locked', '-l', 'app=web')).items).toEqual([]);
  });

  it('prints warn mode violations as warnings and creates the pod', async () => {
    await ok('create', 'namespace', 'watched');
    await ok('label', 'namespace', 'watched', 'pod-security.kubernetes.io/warn=baseline');
    const created = await kubectl(['run', 'net', '-n', 'watched', '--image=nginx', '--overrides={"apiVersion":"v1","spec":{"hostNetwork":true}}']);
    expect(created.code).toBe(0);
    expect(created.stdout.trim()).toBe('pod/net created');
    expect(warningsIn(created.stderr)).toEqual(['Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)']);
    const plain = await kubectl(['run', 'plain', '-n', 'watched', '--image=nginx']);
    expect(warningsIn(plain.stderr)).toEqual([]);
  });

  it('honours a pinned version, and refuses a version or level label it cannot parse', async () => {
    await ok('create', 'namespace', 'pinned');
    // At v1.22 runAsUser=0 was not yet a restricted rule; from v1.23 it is.
    const pinned = await kubectl([
      'label',
      'namespace',
      'pinned',
      'pod-security.kubernetes.io/enforce=restricted',
      'pod-security.kubernetes.io/enforce-version=v1.22',
    ]);
    expect(pinned.code).toBe(0);
    const root = restrictedPod('root', 'pinned').replace('runAsUser: 1000', 'runAsUser: 0');
    expect((await kubectl(['apply', '-f', '-'], root)).stdout.trim()).toBe('pod/root created');
    await ok('label', 'namespace', 'pinned', 'pod-security.kubernetes.io/enforce-version=v1.23', '--overwrite');
    const refused = await kubectl(['apply', '-f', '-'], root.replace('name: root', 'name: root2'));
    expect(refused.stderr).toContain('pods "root2" is forbidden: violates PodSecurity "restricted:v1.23": runAsUser=0 (pod must not set runAsUser=0)');

    const badVersion = await kubectl(['label', 'namespace', 'pinned', 'pod-security.kubernetes.io/enforce-version=1.30', '--overwrite']);
    expect(badVersion.code).not.toBe(0);
    expect(badVersion.stderr.trim()).toBe(
      'The Namespace "pinned" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "1.30": must be "latest" or "v1.x"',
    );
    const badLevel = await kubectl(['label', 'namespace', 'pinned', 'pod-security.kubernetes.io/warn=strict']);
    expect(badLevel.stderr.trim()).toBe(
      'The Namespace "pinned" is invalid: metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    );
    const labels = (await json('get', 'namespace', 'pinned')).metadata.labels;
    expect(labels['pod-security.kubernetes.io/enforce-version']).toBe('v1.23');
    expect(labels['pod-security.kubernetes.io/warn']).toBeUndefined();
  });

  it('refuses a new namespace whose labels do not parse', async () => {
    const manifest = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: typo\n  labels: { pod-security.kubernetes.io/enforce: restriced }\n';
    const refused = await kubectl(['apply', '-f', '-'], manifest);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'The Namespace "typo" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "restriced": must be one of privileged, baseline, restricted',
    );
    expect(await apply(manifest.replace('restriced', 'restricted'))).toContain('namespace/typo created');
  });
});
