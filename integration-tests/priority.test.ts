import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// Priority and DefaultTolerationSeconds admission in a real `skiff up` (the dev preset), driven by the real
// kubectl 1.36: a `kubectl run` pod reads `priority: 0`, `preemptionPolicy: PreemptLowerPriority` and the two
// NoExecute tolerations for 300 s, as an upstream pod does; the system PriorityClasses exist and cannot be deleted;
// a pod naming a class gets its value, one naming a missing class or stating another priority is refused in
// kube-apiserver's words; one global default at a time, and pods naming no class get it.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('priority');
const cacheDir = tempDir('priority-cache');
let skiff: RunningSkiff;
const { kubectl, ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

const UPSTREAM_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

/** Runs kubectl expecting it to fail; answers its stderr. */
async function refused(...args: string[]): Promise<string> {
  const result = await kubectl(args);
  expect(result.code, `kubectl ${args.join(' ')} should fail; stdout: ${result.stdout}`).not.toBe(0);
  return result.stderr.trim();
}

const podManifest = (name: string, spec: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec } });

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('Priority and DefaultTolerationSeconds through kubectl 1.36', () => {
  it('gives a `kubectl run` pod priority 0, PreemptLowerPriority and the not-ready/unreachable tolerations, and it runs', async () => {
    await waitFor('the default ServiceAccount', () => ok('get', 'serviceaccount', 'default'), CLUSTER_TIMEOUT);
    await ok('run', 'plain', '--image=nginx');
    const pod = await json('get', 'pod', 'plain');
    expect(pod.spec.priority).toBe(0);
    expect(pod.spec.preemptionPolicy).toBe('PreemptLowerPriority');
    expect(pod.spec.priorityClassName).toBeUndefined();
    expect(pod.spec.tolerations).toEqual(UPSTREAM_TOLERATIONS);
    const yaml = await ok('get', 'pod', 'plain', '-o', 'yaml');
    expect(yaml).toMatch(/^ {2}priority: 0$/m);
    expect(yaml).toMatch(/^ {2}preemptionPolicy: PreemptLowerPriority$/m);
    await waitFor('plain running', async () => (await json('get', 'pod', 'plain')).status.phase === 'Running', CLUSTER_TIMEOUT);
  });

  it('keeps a toleration the pod brings and adds only the missing one', async () => {
    await apply(
      podManifest('tolerant', { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }] }),
    );
    expect((await json('get', 'pod', 'tolerant')).spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
      UPSTREAM_TOLERATIONS[1],
    ]);
  });

  it('has the system classes, which cannot be deleted nor get another value', async () => {
    const table = await ok('get', 'priorityclasses', 'system-node-critical', 'system-cluster-critical', '--no-headers');
    expect(table.split('\n').map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
      ['system-node-critical', '2000001000', 'false'],
      ['system-cluster-critical', '2000000000', 'false'],
      [''],
    ]);
    expect(await refused('delete', 'priorityclass', 'system-node-critical')).toBe(
      'Error from server (Forbidden): priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted',
    );
    expect(await refused('patch', 'priorityclass', 'system-cluster-critical', '--type=merge', '-p', '{"value":5}')).toMatch(/value: Forbidden/);
    expect(await refused('create', 'priorityclass', 'system-mine', '--value=10')).toMatch(/reserved for system use only/);
    const critical = await json('get', 'priorityclass', 'system-node-critical');
    expect(critical.value).toBe(2_000_001_000);
  });

  it('gives a pod the value and preemption policy of the class it names', async () => {
    expect((await ok('create', 'priorityclass', 'high', '--value=1000')).trim()).toBe('priorityclass.scheduling.k8s.io/high created');
    await ok('create', 'priorityclass', 'polite', '--value=500', '--preemption-policy=Never');
    await ok('run', 'important', '--image=nginx', '--overrides={"spec":{"priorityClassName":"high"}}');
    expect((await json('get', 'pod', 'important')).spec).toMatchObject({ priorityClassName: 'high', priority: 1000, preemptionPolicy: 'PreemptLowerPriority' });
    await ok('run', 'waiting', '--image=nginx', '--overrides={"spec":{"priorityClassName":"polite"}}');
    expect((await json('get', 'pod', 'waiting')).spec).toMatchObject({ priority: 500, preemptionPolicy: 'Never' });
    await ok('run', 'node-agent', '--image=nginx', '--overrides={"spec":{"priorityClassName":"system-node-critical"}}');
    expect((await json('get', 'pod', 'node-agent')).spec.priority).toBe(2_000_001_000);
  });

  it('refuses a pod naming a missing class, or stating a priority its class does not give, in upstream’s words', async () => {
    expect(await refused('run', 'lost', '--image=nginx', '--overrides={"spec":{"priorityClassName":"missing"}}')).toBe(
      'Error from server (Forbidden): pods "lost" is forbidden: no PriorityClass with name missing was found',
    );
    expect(await refused('run', 'greedy', '--image=nginx', '--overrides={"spec":{"priority":1000000}}')).toBe(
      'Error from server (Forbidden): pods "greedy" is forbidden: the integer value of priority (1000000) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
    );
    await ok('run', 'honest', '--image=nginx', '--overrides={"spec":{"priorityClassName":"high","priority":1000}}');
    expect((await json('get', 'pod', 'honest')).spec.priority).toBe(1000);
  });

  it('keeps priority and tolerations when a pod is replaced from a manifest without them', async () => {
    const pod = await json('get', 'pod', 'important');
    const manifest = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'important', labels: { tier: 'front' } }, spec: structuredClone(pod.spec) };
    delete manifest.spec.priority;
    delete manifest.spec.preemptionPolicy;
    delete manifest.spec.tolerations;
    await kubectl(['replace', '-f', '-'], JSON.stringify(manifest)).then((result) => expect(result.stderr).toBe(''));
    const replaced = await json('get', 'pod', 'important');
    expect(replaced.metadata.labels.tier).toBe('front');
    expect(replaced.spec).toEqual(pod.spec);
  });

  it('uses the one global default for pods naming no class, and refuses a second', async () => {
    await ok('create', 'priorityclass', 'standard', '--value=50', '--global-default');
    expect(await refused('create', 'priorityclass', 'another', '--value=60', '--global-default')).toBe(
      'error: failed to create priorityclass: priorityclasses.scheduling.k8s.io "another" is forbidden: PriorityClass standard is already marked as default. Only one default can exist',
    );
    expect(await refused('patch', 'priorityclass', 'high', '--type=merge', '-p', '{"globalDefault":true}')).toMatch(
      /PriorityClass standard is already marked as default\. Only one default can exist/,
    );
    await ok('run', 'defaulted', '--image=nginx');
    expect((await json('get', 'pod', 'defaulted')).spec).toMatchObject({ priorityClassName: 'standard', priority: 50 });
    await ok('delete', 'priorityclass', 'standard');
    await waitFor(
      'pods to get priority 0 again',
      async () => {
        const name = `after-${Date.now()}`;
        await ok('run', name, '--image=nginx');
        return (await json('get', 'pod', name)).spec.priority === 0;
      },
      CLUSTER_TIMEOUT,
    );
  });
});
