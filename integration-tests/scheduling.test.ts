import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions, podRunning } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The scheduler's default plugins in a real `skiff up --nodes 3` (the dev preset), driven by the real kubectl 1.36,
// each case judged by where pods land, their PodScheduled condition and the FailedScheduling event worded as
// kube-scheduler words it: taints and tolerations (NoSchedule, PreferNoSchedule, and NoExecute eviction by the node
// lifecycle controller, at once or after tolerationSeconds), required and preferred node affinity, required pod
// anti-affinity across hostnames, topology spread over three zones, host-port conflicts, preemption of
// lower-priority pods, and a second profile chosen by schedulerName in a second cluster.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('scheduling');
const cacheDir = tempDir('scheduling-cache');
const WAIT = { timeoutMs: 30_000, intervalMs: 200 };
let skiff: RunningSkiff;
const { ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

const container = (extra: Record<string, unknown> = {}) => ({ name: 'app', image: 'nginx', ...extra });

function pod(namespace: string, name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { containers: [container()], ...spec } };
}

function deployment(namespace: string, name: string, replicas: number, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [container()], ...spec } },
    },
  };
}

const applyAll = (...objects: object[]) => apply(objects.map((object) => JSON.stringify(object)).join('\n'));

/** A namespace of the test's own, deleted (without waiting) when the test ends. */
async function namespace(name: string): Promise<string> {
  await ok('create', 'namespace', name);
  await waitFor(`the default ServiceAccount in ${name}`, () => ok('get', 'serviceaccount', 'default', '-n', name), CLUSTER_TIMEOUT);
  return name;
}
const dropNamespace = (name: string) => ok('delete', 'namespace', name, '--wait=false');

interface PodView {
  name: string;
  node?: string;
  phase?: string;
  running: boolean;
  deleting: boolean;
  pod: any;
}

async function podsIn(ns: string, selector?: string): Promise<PodView[]> {
  const list = await json('get', 'pods', '-n', ns, ...(selector ? ['-l', selector] : []));
  return (list.items as any[]).map((p) => ({
    name: p.metadata.name,
    node: p.spec.nodeName,
    phase: p.status?.phase,
    running: podRunning(p),
    deleting: Boolean(p.metadata.deletionTimestamp),
    pod: p,
  }));
}

/** Waits until `count` live pods of `selector` exist and `running` of them run; answers them. */
async function settled(ns: string, selector: string, count: number, running = count): Promise<PodView[]> {
  return waitFor(
    `${running} of ${count} pods ${selector} running in ${ns}`,
    async () => {
      const live = (await podsIn(ns, selector)).filter((p) => !p.deleting);
      if (live.length === count && live.filter((p) => p.running).length === running) return live;
      throw new Error(`pods: ${JSON.stringify(live.map(({ name, node, phase }) => ({ name, node, phase })))}`);
    },
    WAIT,
  );
}

const nodeCounts = (pods: PodView[]) => {
  const counts: Record<string, number> = {};
  for (const p of pods) if (p.node) counts[p.node] = (counts[p.node] ?? 0) + 1;
  return counts;
};

/** The messages of the pod's events with `reason`, with the component that reported each. */
async function eventsOf(ns: string, podName: string, reason: string): Promise<{ message: string; component: string; type: string }[]> {
  const list = await json('get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${podName},reason=${reason}`);
  return (list.items as any[]).map((e) => ({ message: e.message, component: e.source?.component ?? e.reportingComponent, type: e.type }));
}

/**
 * Waits until the one Pending pod of `selector` has the FailedScheduling event and the PodScheduled condition
 * with `message`, both from default-scheduler; answers the pod.
 */
async function unschedulable(ns: string, selector: string, message: string): Promise<PodView> {
  return waitFor(
    `a Pending pod ${selector} in ${ns} with FailedScheduling "${message}"`,
    async () => {
      const pending = (await podsIn(ns, selector)).filter((p) => !p.node && !p.deleting);
      if (pending.length !== 1) throw new Error(`pending pods: ${pending.map((p) => p.name).join(', ') || 'none'}`);
      const [view] = pending;
      const condition = (view!.pod.status?.conditions ?? []).find((c: any) => c.type === 'PodScheduled');
      const events = await eventsOf(ns, view!.name, 'FailedScheduling');
      if (condition?.message !== message || !events.some((e) => e.message === message)) {
        throw new Error(`condition: ${JSON.stringify(condition)}; events: ${JSON.stringify(events)}`);
      }
      expect(condition).toMatchObject({ status: 'False', reason: 'Unschedulable' });
      expect(events.find((e) => e.message === message)).toEqual({ message, component: 'default-scheduler', type: 'Warning' });
      expect(view!.phase).toBe('Pending');
      return view!;
    },
    WAIT,
  );
}

const NOT_HELPFUL = (n: number) => ` preemption: 0/3 nodes are available: ${n} Preemption is not helpful for scheduling..`;
const NO_VICTIMS = (n: number) => ` preemption: 0/3 nodes are available: ${n} No preemption victims found for incoming pod..`;

describe('the scheduler through kubectl 1.36 on skiff up --nodes 3', () => {
  beforeAll(async () => {
    skiff = await startSkiff(['--nodes', '3', '--data-dir', join(project, 'data')], { cwd: project });
    await waitFor('3 nodes', async () => (await json('get', 'nodes')).items.length === 3, CLUSTER_TIMEOUT);
  });
  afterAll(async () => {
    await skiff?.stop();
    rmSync(project, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('keeps pods off a NoSchedule-tainted node unless they tolerate it, and avoids a PreferNoSchedule one', async () => {
    const ns = await namespace('taints');
    await ok('taint', 'node', 'node-1', 'dedicated=x:NoSchedule');
    try {
      await applyAll(deployment(ns, 'web', 8));
      const web = await settled(ns, 'app=web', 8);
      expect(Object.keys(nodeCounts(web)).sort()).toEqual(['node-2', 'node-3']);

      const toleration = { key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule' };
      const onNode1 = { nodeSelector: { 'kubernetes.io/hostname': 'node-1' } };
      await applyAll(
        pod(ns, 'tolerant', { ...onNode1, tolerations: [toleration] }, { role: 'tolerant' }),
        pod(ns, 'intolerant', onNode1, { role: 'intolerant' }),
      );
      const [tolerant] = await settled(ns, 'role=tolerant', 1);
      expect(tolerant!.node).toBe('node-1');
      expect(tolerant!.pod.status.conditions.find((c: any) => c.type === 'PodScheduled')).toMatchObject({ status: 'True' });
      expect((await eventsOf(ns, 'tolerant', 'Scheduled'))[0]).toEqual({
        message: `Successfully assigned ${ns}/tolerant to node-1`,
        component: 'default-scheduler',
        type: 'Normal',
      });
      await unschedulable(
        ns,
        'role=intolerant',
        `0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: x}, 2 node(s) didn't match Pod's node affinity/selector.${NOT_HELPFUL(3)}`,
      );
      const described = await ok('describe', 'pod', 'intolerant', '-n', ns);
      expect(described).toMatch(
        /Warning\s+FailedScheduling\s+\S+\s+default-scheduler\s+0\/3 nodes are available: 1 node\(s\) had untolerated taint \{dedicated: x\}/,
      );
    } finally {
      await ok('taint', 'node', 'node-1', 'dedicated-');
    }
    // The intolerant pod is retried once the taint goes.
    await waitFor('intolerant on node-1', async () => (await json('get', 'pod', 'intolerant', '-n', ns)).spec.nodeName === 'node-1', WAIT);

    await ok('taint', 'node', 'node-1', 'shared=maybe:PreferNoSchedule');
    try {
      await applyAll(deployment(ns, 'prefer', 4));
      const prefer = await settled(ns, 'app=prefer', 4);
      expect(Object.keys(nodeCounts(prefer)).sort()).toEqual(['node-2', 'node-3']);
    } finally {
      await ok('taint', 'node', 'node-1', 'shared-');
    }
    await dropNamespace(ns);
  });

  it('evicts pods from a NoExecute-tainted node at once, after tolerationSeconds, or never', async () => {
    const ns = await namespace('no-execute');
    const onNode3 = { nodeSelector: { 'kubernetes.io/hostname': 'node-3' } };
    const evict = { key: 'evict', operator: 'Equal', value: 'now', effect: 'NoExecute' };
    await applyAll(
      pod(ns, 'plain', onNode3),
      pod(ns, 'patient', { ...onNode3, tolerations: [{ ...evict, tolerationSeconds: 3 }] }),
      pod(ns, 'forever', { ...onNode3, tolerations: [evict] }),
    );
    await settled(ns, '', 3);
    await ok('taint', 'node', 'node-3', 'evict=now:NoExecute');
    const tainted = Date.now();
    try {
      const evictedAt: Record<string, number> = {};
      await waitFor(
        'plain and patient evicted',
        async () => {
          const now = Date.now() - tainted;
          const live = new Map((await podsIn(ns)).filter((p) => !p.deleting).map((p) => [p.name, p]));
          for (const name of ['plain', 'patient', 'forever']) if (!live.has(name)) evictedAt[name] ??= now;
          return evictedAt.plain !== undefined && evictedAt.patient !== undefined;
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      expect(evictedAt.plain).toBeLessThan(2_000);
      expect(evictedAt.patient).toBeGreaterThanOrEqual(2_900);
      expect(evictedAt.patient).toBeLessThan(6_000);
      expect(evictedAt.forever).toBeUndefined();

      const eviction = await waitFor('the TaintManagerEviction events', async () => {
        const events = [...(await eventsOf(ns, 'plain', 'TaintManagerEviction')), ...(await eventsOf(ns, 'patient', 'TaintManagerEviction'))];
        return events.length === 2 && events;
      });
      expect(eviction.map((e) => e.message)).toEqual([`Marking for deletion Pod ${ns}/plain`, `Marking for deletion Pod ${ns}/patient`]);

      await new Promise((r) => setTimeout(r, 1_000));
      const [forever] = await podsIn(ns);
      expect(forever).toMatchObject({ name: 'forever', node: 'node-3', running: true, deleting: false });
      expect(forever!.pod.status.conditions.some((c: any) => c.type === 'DisruptionTarget')).toBe(false);
    } finally {
      await ok('taint', 'node', 'node-3', 'evict-');
    }
    await dropNamespace(ns);
  });

  it('places pods by required and preferred node affinity', async () => {
    const ns = await namespace('node-affinity');
    await ok('label', 'node', 'node-2', 'skiff.test/disk=ssd');
    await ok('label', 'node', 'node-3', 'skiff.test/rack=b');
    try {
      const required = (values: string[]) => ({
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'skiff.test/disk', operator: 'In', values }] }],
          },
        },
      });
      await applyAll(
        deployment(ns, 'fast', 3, { affinity: required(['ssd', 'nvme']) }),
        pod(ns, 'nowhere', { affinity: required(['tape']) }, { role: 'nowhere' }),
        deployment(ns, 'rack-b', 3, {
          affinity: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 100, preference: { matchExpressions: [{ key: 'skiff.test/rack', operator: 'In', values: ['b'] }] } },
              ],
            },
          },
        }),
      );
      expect(nodeCounts(await settled(ns, 'app=fast', 3))).toEqual({ 'node-2': 3 });
      expect(nodeCounts(await settled(ns, 'app=rack-b', 3))).toEqual({ 'node-3': 3 });
      await unschedulable(ns, 'role=nowhere', `0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.${NOT_HELPFUL(3)}`);
    } finally {
      await ok('label', 'node', 'node-2', 'skiff.test/disk-');
      await ok('label', 'node', 'node-3', 'skiff.test/rack-');
    }
    await dropNamespace(ns);
  });

  it('runs replicas with required anti-affinity on kubernetes.io/hostname one per node, the fourth Pending', async () => {
    const ns = await namespace('anti-affinity');
    await applyAll(
      deployment(ns, 'solo', 4, {
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'solo' } }, topologyKey: 'kubernetes.io/hostname' }],
          },
        },
      }),
    );
    const solo = await settled(ns, 'app=solo', 4, 3);
    expect(nodeCounts(solo)).toEqual({ 'node-1': 1, 'node-2': 1, 'node-3': 1 });
    await unschedulable(ns, 'app=solo', `0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.${NO_VICTIMS(3)}`);
    await dropNamespace(ns);
  });

  it('spreads 6 replicas 2/2/2 over three zones with maxSkew 1 and DoNotSchedule', async () => {
    const ns = await namespace('spread');
    for (const n of [1, 2, 3]) await ok('label', 'node', `node-${n}`, `topology.kubernetes.io/zone=zone-${n}`);
    try {
      await applyAll(
        deployment(ns, 'zonal', 6, {
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'zonal' } } },
          ],
        }),
      );
      expect(nodeCounts(await settled(ns, 'app=zonal', 6))).toEqual({ 'node-1': 2, 'node-2': 2, 'node-3': 2 });
    } finally {
      for (const n of [1, 2, 3]) await ok('label', 'node', `node-${n}`, 'topology.kubernetes.io/zone-');
    }
    await dropNamespace(ns);
  });

  it('runs pods asking for the same host port one per node, the fourth Pending', async () => {
    const ns = await namespace('host-ports');
    await applyAll(deployment(ns, 'porter', 4, { containers: [container({ ports: [{ containerPort: 8080, hostPort: 18080 }] })] }));
    const porter = await settled(ns, 'app=porter', 4, 3);
    expect(nodeCounts(porter)).toEqual({ 'node-1': 1, 'node-2': 1, 'node-3': 1 });
    await unschedulable(ns, 'app=porter', `0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.${NO_VICTIMS(3)}`);
    await dropNamespace(ns);
  });

  it('preempts a lower-priority pod for a higher-priority one that fits nowhere else', async () => {
    const ns = await namespace('preemption');
    const nodes = (await json('get', 'nodes')).items as any[];
    const cpu = nodes.map((node) => Number(node.status.allocatable.cpu));
    expect(cpu.every((c) => Number.isInteger(c) && c >= 2 && c === cpu[0])).toBe(true);
    const allocatable = cpu[0]!;
    // Each filler takes all but one cpu of a node; the high pod wants two.
    await ok('create', 'priorityclass', 'low', '--value=10');
    await ok('create', 'priorityclass', 'high', '--value=1000');
    const requests = (n: number) => [container({ resources: { requests: { cpu: String(n) } } })];
    await applyAll(...[1, 2, 3].map((n) => pod(ns, `filler-${n}`, { priorityClassName: 'low', containers: requests(allocatable - 1) }, { role: 'filler' })));
    const fillers = await settled(ns, 'role=filler', 3);
    expect(Object.keys(nodeCounts(fillers)).sort()).toEqual(['node-1', 'node-2', 'node-3']);

    const watch = await watchPod(ns, 'high');
    try {
      await applyAll(pod(ns, 'high', { priorityClassName: 'high', containers: requests(2) }, { role: 'high' }));
      const [high] = await settled(ns, 'role=high', 1);
      const nominated = await waitFor('a nominatedNodeName seen on the watch', async () => {
        const seen = watch.nominated();
        return seen.length > 0 && seen;
      });
      expect(new Set(nominated).size).toBe(1);
      expect(high!.node).toBe(nominated[0]);
      expect(high!.pod.spec.priority).toBe(1000);

      const victim = fillers.find((f) => f.node === high!.node)!;
      const left = (await podsIn(ns, 'role=filler')).filter((p) => !p.deleting);
      expect(left.map((p) => p.name).sort()).toEqual(
        fillers
          .filter((f) => f !== victim)
          .map((f) => f.name)
          .sort(),
      );
      const preempted = await waitFor('the Preempted event', async () => {
        const events = await eventsOf(ns, victim.name, 'Preempted');
        return events.length > 0 && events;
      });
      expect(preempted).toEqual([{ message: `Preempted by a pod on node ${high!.node}`, component: 'default-scheduler', type: 'Normal' }]);
      const failed = await eventsOf(ns, 'high', 'FailedScheduling');
      expect(failed.map((e) => e.message)).toContain('0/3 nodes are available: 3 Insufficient cpu.');
    } finally {
      watch.stop();
      await ok('delete', 'priorityclass', 'low', 'high');
    }
    await dropNamespace(ns);
  });
});

/**
 * A watch of pod `name` from the namespace's current resourceVersion (`kubectl get --raw …?watch=1`), so every
 * later change reaches it however late the connection opens: the nominatedNodeName values the pod was seen with.
 */
async function watchPod(ns: string, name: string): Promise<{ nominated: () => string[]; stop: () => void }> {
  const list = JSON.parse(await ok('get', '--raw', `/api/v1/namespaces/${ns}/pods`));
  const query = `watch=1&fieldSelector=metadata.name%3D${name}&resourceVersion=${list.metadata.resourceVersion}`;
  const child = spawn(kubectl136.path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, 'get', '--raw', `/api/v1/namespaces/${ns}/pods?${query}`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return {
    nominated: () => [...out.matchAll(/"nominatedNodeName":\s*"([^"]+)"/g)].map((m) => m[1]!),
    stop: () => child.kill('SIGTERM'),
  };
}

describe('a second scheduler profile chosen by spec.schedulerName', () => {
  const second = tempDir('scheduling-profiles');
  const secondCache = tempDir('scheduling-profiles-cache');
  let other: RunningSkiff;
  const k = kubectlOn(kubectl136.path, () => other.kubeconfig, secondCache);

  beforeAll(async () => {
    writeFileSync(
      join(second, 'skiff.config.mjs'),
      `export default {
  plugins: [
    ['@skiff/scheduler', {
      profiles: [
        { schedulerName: 'default-scheduler' },
        { schedulerName: 'spread-nothing', plugins: { score: { disabled: [{ name: '*' }] } } },
      ],
    }],
  ],
};
`,
    );
    other = await startSkiff(['--nodes', '2', '--data-dir', join(second, 'data')], { cwd: second });
    await waitFor('the default ServiceAccount', () => k.ok('get', 'serviceaccount', 'default'), CLUSTER_TIMEOUT);
  });
  afterAll(async () => {
    await other?.stop();
    rmSync(second, { recursive: true, force: true });
    rmSync(secondCache, { recursive: true, force: true });
  });

  it('schedules a pod naming the profile from that profile, and leaves one naming no profile Pending untouched', async () => {
    await k.apply(
      [pod('default', 'chosen', { schedulerName: 'spread-nothing' }), pod('default', 'orphan', { schedulerName: 'nobody' }), pod('default', 'usual')]
        .map((object) => JSON.stringify(object))
        .join('\n'),
    );
    for (const name of ['chosen', 'usual']) {
      await waitFor(`${name} running`, async () => podRunning(await k.json('get', 'pod', name)), WAIT);
    }
    const scheduled = async (name: string) =>
      ((await k.json('get', 'events', '--field-selector', `involvedObject.name=${name},reason=Scheduled`)).items as any[]).map((e) => ({
        component: e.source?.component ?? e.reportingComponent,
        message: e.message,
      }));
    const chosen = await k.json('get', 'pod', 'chosen');
    expect(await scheduled('chosen')).toEqual([{ component: 'spread-nothing', message: `Successfully assigned default/chosen to ${chosen.spec.nodeName}` }]);
    expect((await scheduled('usual'))[0]?.component).toBe('default-scheduler');
    expect(await k.ok('describe', 'pod', 'chosen')).toMatch(/Normal\s+Scheduled\s+\S+\s+spread-nothing\s+Successfully assigned default\/chosen to node-\d/);

    await new Promise((r) => setTimeout(r, 1_500));
    const orphan = await k.json('get', 'pod', 'orphan');
    expect(orphan.spec.nodeName).toBeUndefined();
    // As kube-apiserver creates it (Pending, its QoS class, no conditions) and no scheduler has touched it since.
    expect(orphan.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    expect((await k.json('get', 'events', '--field-selector', 'involvedObject.name=orphan')).items).toEqual([]);
  });
});
