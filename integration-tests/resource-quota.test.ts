import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// ResourceQuota and LimitRange in a real `skiff up` (the dev preset plus @skiff/plugin-admission-resource-quota,
// @skiff/plugin-controller-resource-quota and @skiff/plugin-admission-limit-ranger): the real kubectl 1.36 for
// what a user sees (refusals on stderr in kube-apiserver's words, `kubectl describe quota`, LimitRange defaults),
// and @kubernetes/client-node over HTTPS for bursts of hundreds of concurrent creates against a quota: exactly
// the quota's room is admitted, the rest is refused 403, and status.used ends equal to what is stored.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('resource-quota');
const cacheDir = tempDir('resource-quota-cache');
let skiff: RunningSkiff;
let core: k8s.CoreV1Api;
const { kubectl, ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

beforeAll(async () => {
  writeFileSync(
    join(project, 'skiff.config.mjs'),
    `export default {
  plugins: [
    '@skiff/plugin-admission-limit-ranger',
    '@skiff/plugin-admission-resource-quota',
    ['@skiff/plugin-controller-resource-quota', { resyncIntervalMs: 5000 }],
  ],
};
`,
  );
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(skiff.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
}, 60_000);
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

/** A namespace with its root CA ConfigMap published, so nothing else arrives in it behind the test's back. */
async function namespace(name: string): Promise<void> {
  await ok('create', 'namespace', name);
  await waitFor(
    `the root CA ConfigMap in ${name}`,
    async () => (await kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', name])).code === 0,
    CLUSTER_TIMEOUT,
  );
}

const usedOf = async (namespace: string, quota: string): Promise<Record<string, string>> =>
  (await json('get', 'resourcequota', quota, '-n', namespace)).status?.used ?? {};

describe('ResourceQuota and LimitRange through kubectl 1.36', () => {
  it('counts usage into status.used, shows it in describe, and refuses past the limit with upstream wording', async () => {
    await namespace('quota-demo');
    await ok('create', 'quota', 'q', '--hard=pods=2,configmaps=3', '-n', 'quota-demo');
    await waitFor('the quota counted', async () => (await usedOf('quota-demo', 'q')).configmaps === '1', CLUSTER_TIMEOUT);
    await ok('run', 'p1', '--image=nginx', '-n', 'quota-demo');
    // A server-side dry run is checked and not charged.
    expect((await ok('run', 'p2', '--image=nginx', '-n', 'quota-demo', '--dry-run=server')).trim()).toBe('pod/p2 created (server dry run)');
    expect((await usedOf('quota-demo', 'q')).pods).toBe('1');
    await ok('run', 'p2', '--image=nginx', '-n', 'quota-demo');
    const refused = await kubectl(['run', 'p3', '--image=nginx', '-n', 'quota-demo']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2',
    );
    expect(await usedOf('quota-demo', 'q')).toEqual({ configmaps: '1', pods: '2' });
    expect(await ok('get', 'quota', 'q', '-n', 'quota-demo', '--no-headers')).toMatch(/^q\s+\S+\s+configmaps: 1\/3, pods: 2\/2\s*$/);
    const described = await ok('describe', 'quota', 'q', '-n', 'quota-demo');
    expect(described).toMatch(/Resource\s+Used\s+Hard/);
    expect(described).toMatch(/configmaps\s+1\s+3/);
    expect(described).toMatch(/pods\s+2\s+2/);

    // A delete gives the room back once the controller has counted again.
    await ok('delete', 'pod', 'p1', '-n', 'quota-demo', '--grace-period=0', '--force');
    await waitFor('the delete counted', async () => (await usedOf('quota-demo', 'q')).pods === '1', CLUSTER_TIMEOUT);
    await ok('run', 'p3', '--image=nginx', '-n', 'quota-demo');
    expect((await usedOf('quota-demo', 'q')).pods).toBe('2');
  });

  it('asks pods for the requests and limits a quota tracks; LimitRange defaults supply them, with the annotation', async () => {
    await namespace('compute');
    await ok('create', 'quota', 'compute', '--hard=requests.cpu=1,limits.memory=1Gi', '-n', 'compute');
    const bare = await kubectl(['run', 'bare', '--image=nginx', '-n', 'compute']);
    expect(bare.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: bare; requests.cpu for: bare',
    );
    await apply(`
apiVersion: v1
kind: LimitRange
metadata: { name: defaults, namespace: compute }
spec:
  limits:
  - type: Container
    default: { cpu: 500m, memory: 256Mi }
    defaultRequest: { cpu: 250m, memory: 128Mi }
    max: { cpu: "1" }
`);
    await ok('run', 'defaulted', '--image=nginx', '-n', 'compute');
    const pod = await json('get', 'pod', 'defaulted', '-n', 'compute');
    expect(pod.spec.containers[0].resources).toEqual({ requests: { cpu: '250m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
    expect(pod.metadata.annotations['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu, memory request for container defaulted; cpu, memory limit for container defaulted',
    );
    expect(await usedOf('compute', 'compute')).toEqual({ 'limits.memory': '256Mi', 'requests.cpu': '250m' });

    const big = await kubectl(['run', 'big', '--image=nginx', '-n', 'compute', '--overrides', JSON.stringify(overrides('big', { cpu: '2' }))]);
    expect(big.stderr.trim()).toBe('Error from server (Forbidden): pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');

    // Four pods of 250m and 256Mi fill both: the fifth is refused with what it asked, what is used and the limits.
    for (const name of ['c2', 'c3', 'c4']) await ok('run', name, '--image=nginx', '-n', 'compute');
    const over = await kubectl(['run', 'c5', '--image=nginx', '-n', 'compute']);
    expect(over.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "c5" is forbidden: exceeded quota: compute, requested: limits.memory=256Mi,requests.cpu=250m, ' +
        'used: limits.memory=1Gi,requests.cpu=1, limited: limits.memory=1Gi,requests.cpu=1',
    );
  });

  it('honours scopes: a BestEffort quota counts only pods without requests or limits', async () => {
    await namespace('scoped');
    await apply(`
apiVersion: v1
kind: ResourceQuota
metadata: { name: best-effort, namespace: scoped }
spec:
  hard: { pods: "1" }
  scopes: [BestEffort]
`);
    await ok('run', 'free', '--image=nginx', '-n', 'scoped');
    const second = await kubectl(['run', 'free2', '--image=nginx', '-n', 'scoped']);
    expect(second.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "free2" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1',
    );
    await ok('run', 'sized', '--image=nginx', '-n', 'scoped', '--overrides', JSON.stringify(overrides('sized', { cpu: '100m' })));
    expect(await usedOf('scoped', 'best-effort')).toEqual({ pods: '1' });
  });
});

function overrides(name: string, limits: Record<string, string>) {
  return { apiVersion: 'v1', spec: { containers: [{ name, image: 'nginx', resources: { limits } }] } };
}

interface Outcome {
  created: number;
  refused: number;
  other: string[];
}

/** Runs every create at once and sorts the answers: created, refused by quota (403 exceeded quota), or anything else. */
async function burst(creates: (() => Promise<unknown>)[]): Promise<Outcome> {
  const results = await Promise.allSettled(creates.map((create) => create()));
  const outcome: Outcome = { created: 0, refused: 0, other: [] };
  for (const result of results) {
    if (result.status === 'fulfilled') outcome.created++;
    else {
      const err = result.reason as { code?: number; body?: unknown; message?: string };
      const body = typeof err.body === 'string' ? err.body : JSON.stringify(err.body ?? err.message);
      if (err.code === 403 && body.includes('exceeded quota:')) outcome.refused++;
      else outcome.other.push(`${err.code}: ${body}`);
    }
  }
  return outcome;
}

const configMap = (name: string) => ({ metadata: { name }, data: { n: name } });
const pod = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx' }] } });

describe('hundreds of concurrent creates never pass a ResourceQuota (@kubernetes/client-node over HTTPS)', () => {
  const ns = 'burst';

  /** Waits until the controller's counting agrees with what is stored, and stays so. */
  async function settled(expected: { pods: number; configmaps: number }): Promise<void> {
    await waitFor(
      `status.used of ${JSON.stringify(expected)}`,
      async () => {
        const used = await usedOf(ns, 'burst');
        return used.pods === String(expected.pods) && used.configmaps === String(expected.configmaps);
      },
      { timeoutMs: 30_000 },
    );
  }

  async function stored(): Promise<{ pods: number; configmaps: number }> {
    const pods = (await core.listNamespacedPod({ namespace: ns })).items.filter((p) => !p.metadata?.deletionTimestamp).length;
    const configmaps = (await core.listNamespacedConfigMap({ namespace: ns })).items.length;
    return { pods, configmaps };
  }

  it('admits exactly the room left of pods=50 and configmaps=100 among 300 + 300 creates, then again after deletes', async () => {
    await namespace(ns);
    await ok('create', 'quota', 'burst', '--hard=pods=50,configmaps=100', '-n', ns);
    await settled({ pods: 0, configmaps: 1 });

    const started = Date.now();
    const [pods, configMaps] = await Promise.all([
      burst(Array.from({ length: 300 }, (_, i) => () => core.createNamespacedPod({ namespace: ns, body: pod(`p-${i}`) }))),
      burst(Array.from({ length: 300 }, (_, i) => () => core.createNamespacedConfigMap({ namespace: ns, body: configMap(`cm-${i}`) }))),
    ]);
    const elapsed = Date.now() - started;
    expect(pods).toEqual({ created: 50, refused: 250, other: [] });
    expect(configMaps).toEqual({ created: 99, refused: 201, other: [] });
    expect(await stored()).toEqual({ pods: 50, configmaps: 100 });
    await settled({ pods: 50, configmaps: 100 });
    console.log(`600 concurrent creates against the quota answered in ${elapsed} ms`);

    // Deletes make room again (once the controller has counted), and a second burst takes exactly that room.
    const podNames = (await core.listNamespacedPod({ namespace: ns })).items.map((p) => p.metadata!.name!).slice(0, 20);
    const cmNames = (await core.listNamespacedConfigMap({ namespace: ns })).items
      .map((c) => c.metadata!.name!)
      .filter((n) => n.startsWith('cm-'))
      .slice(0, 30);
    await Promise.all([
      ...podNames.map((name) => core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 })),
      ...cmNames.map((name) => core.deleteNamespacedConfigMap({ name, namespace: ns })),
    ]);
    await waitFor('the pods gone', async () => (await stored()).pods === 30, { timeoutMs: 30_000 });
    await settled({ pods: 30, configmaps: 70 });

    const [morePods, moreConfigMaps] = await Promise.all([
      burst(Array.from({ length: 300 }, (_, i) => () => core.createNamespacedPod({ namespace: ns, body: pod(`q-${i}`) }))),
      burst(Array.from({ length: 300 }, (_, i) => () => core.createNamespacedConfigMap({ namespace: ns, body: configMap(`dm-${i}`) }))),
    ]);
    expect(morePods).toEqual({ created: 20, refused: 280, other: [] });
    expect(moreConfigMaps).toEqual({ created: 30, refused: 270, other: [] });
    expect(await stored()).toEqual({ pods: 50, configmaps: 100 });
    await settled({ pods: 50, configmaps: 100 });
  });

  it('gives back the charge of creates that fail after admission (the name is taken)', async () => {
    // Room for the attempts, so that only the store can refuse them.
    await ok('patch', 'quota', 'burst', '-n', ns, '--type=merge', '-p', '{"spec":{"hard":{"configmaps":"400"}}}');
    await waitFor('the new limit', async () => (await json('get', 'resourcequota', 'burst', '-n', ns)).status?.hard?.configmaps === '400', CLUSTER_TIMEOUT);
    const taken = Array.from({ length: 100 }, (_, i) => () => core.createNamespacedConfigMap({ namespace: ns, body: configMap(`dm-${i % 30}`) }));
    const results = await Promise.allSettled(taken.map((create) => create()));
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: number }).code : 201));
    expect(codes.every((code) => code === 409)).toBe(true);
    // Each charge is given back as soon as its request is answered: no recount needed.
    await waitFor('the charges given back', async () => (await usedOf(ns, 'burst')).configmaps === '100', { timeoutMs: 5_000 });
    expect(await stored()).toEqual({ pods: 50, configmaps: 100 });
  });
});
