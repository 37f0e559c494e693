import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The DaemonSet controller in a real `skiff up --nodes 3`, driven by the real kubectl 1.36: one Running pod
// per node, `rollout status` to completion, an image change rolled through node by node, `rollout undo`
// back to the first revision, a nodeSelector narrowing it to one labelled node, and deletion taking its
// pods and revisions along (or leaving the pods when orphaned).

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('daemonsets');
const cacheDir = tempDir('daemonsets-cache');
const NODES = ['node-1', 'node-2', 'node-3'];
const WAIT = { timeoutMs: 30_000 };
let skiff: RunningSkiff;
const { kubectl, ok, json } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

beforeAll(async () => {
  skiff = await startSkiff(['--nodes', '3', '--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const MANIFEST = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: nginx:1.25
`;

interface PodView {
  name: string;
  node?: string;
  phase?: string;
  image: string;
}

async function agentPods(): Promise<PodView[]> {
  const list = await json('get', 'pods', '-l', 'app=agent');
  return (list.items as any[])
    .filter((pod) => !pod.metadata.deletionTimestamp)
    .map((pod) => ({ name: pod.metadata.name, node: pod.spec.nodeName, phase: pod.status?.phase, image: pod.spec.containers[0].image }));
}

/** Waits until exactly one Running pod of `image` is on each of `nodes` and no pod is anywhere else. */
async function runningOn(nodes: string[], image: string): Promise<PodView[]> {
  return waitFor(
    `one Running ${image} pod on each of ${nodes.join(', ')}`,
    async () => {
      const pods = await agentPods();
      const placed = pods.map((pod) => pod.node ?? '').sort();
      return pods.every((pod) => pod.phase === 'Running' && pod.image === image) && placed.join() === [...nodes].sort().join() && pods;
    },
    WAIT,
  );
}

describe('DaemonSets through kubectl 1.36 on skiff up --nodes 3', () => {
  it('runs one pod on every node and rollout status completes', async () => {
    await waitFor('3 Ready nodes', async () => (await json('get', 'nodes')).items.length === 3, CLUSTER_TIMEOUT);
    expect(await kubectl(['apply', '-f', '-'], MANIFEST)).toMatchObject({ code: 0, stdout: 'daemonset.apps/agent created\n' });
    const pods = await runningOn(NODES, 'nginx:1.25');
    for (const pod of pods) expect(pod.name).toMatch(/^agent-[a-z0-9]{5}$/);
    expect(await ok('rollout', 'status', 'ds/agent', '--timeout=60s')).toContain('daemon set "agent" successfully rolled out');

    const ds = await json('get', 'ds', 'agent');
    expect(ds.status).toMatchObject({
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      updatedNumberScheduled: 3,
      numberReady: 3,
      numberAvailable: 3,
      numberMisscheduled: 0,
      observedGeneration: 1,
    });
    const table = await ok('get', 'ds', 'agent');
    expect(table.split('\n')[0]).toMatch(/^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE$/);
    expect(table.split('\n')[1]).toMatch(/^agent\s+3\s+3\s+3\s+3\s+3\s+<none>\s+\S+$/);
  });

  it('rolls an image change through every node, and rollout undo restores the first revision', async () => {
    const before = await agentPods();
    await ok('set', 'image', 'ds/agent', 'agent=nginx:1.27');
    expect(await ok('rollout', 'status', 'ds/agent', '--timeout=60s')).toContain('daemon set "agent" successfully rolled out');
    const updated = await runningOn(NODES, 'nginx:1.27');
    expect(updated.map((pod) => pod.name).filter((name) => before.some((old) => old.name === name))).toEqual([]);

    const history = await ok('rollout', 'history', 'ds/agent');
    expect(history).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    expect(await ok('rollout', 'history', 'ds/agent', '--revision=1')).toMatch(/Image:\s+nginx:1\.25/);
    const revisions = await json('get', 'controllerrevisions', '-l', 'app=agent');
    expect(revisions.items).toHaveLength(2);

    expect(await ok('rollout', 'undo', 'ds/agent')).toBe('daemonset.apps/agent rolled back\n');
    expect(await ok('rollout', 'status', 'ds/agent', '--timeout=60s')).toContain('daemon set "agent" successfully rolled out');
    await runningOn(NODES, 'nginx:1.25');
    expect(await ok('rollout', 'history', 'ds/agent')).toMatch(/REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);
    expect((await json('get', 'ds', 'agent')).status).toMatchObject({ desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 });
  });

  it('narrows to the labelled node when the template gets a nodeSelector', async () => {
    await ok('label', 'node', 'node-2', 'skiff.test/agent=yes');
    await ok('patch', 'ds', 'agent', '-p', '{"spec":{"template":{"spec":{"nodeSelector":{"skiff.test/agent":"yes"}}}}}');
    await runningOn(['node-2'], 'nginx:1.25');
    expect(await ok('rollout', 'status', 'ds/agent', '--timeout=60s')).toContain('daemon set "agent" successfully rolled out');
    const status = await waitFor(
      'status for one node',
      async () => {
        const ds = await json('get', 'ds', 'agent');
        return ds.status.desiredNumberScheduled === 1 && ds.status.currentNumberScheduled === 1 && ds.status.numberMisscheduled === 0 && ds.status;
      },
      WAIT,
    );
    expect(status).toMatchObject({ numberAvailable: 1, updatedNumberScheduled: 1 });
    expect((await ok('get', 'ds', 'agent')).split('\n')[1]).toMatch(/^agent\s+1\s+1\s+1\s+1\s+1\s+skiff\.test\/agent=yes\s+\S+$/);
  });

  it('takes its pods and revisions along when deleted', async () => {
    expect(await ok('delete', 'ds', 'agent')).toBe('daemonset.apps "agent" deleted from default namespace\n');
    await waitFor('the pods gone', async () => (await json('get', 'pods', '-l', 'app=agent')).items.length === 0, WAIT);
    await waitFor('the revisions gone', async () => (await json('get', 'controllerrevisions', '-l', 'app=agent')).items.length === 0, WAIT);
  });

  it('leaves its pods running, without an owner, when deleted with --cascade=orphan', async () => {
    expect(await kubectl(['apply', '-f', '-'], MANIFEST)).toMatchObject({ code: 0, stdout: 'daemonset.apps/agent created\n' });
    const pods = await runningOn(NODES, 'nginx:1.25');
    await ok('delete', 'ds', 'agent', '--cascade=orphan');
    await waitFor('the DaemonSet gone', async () => (await kubectl(['get', 'ds', 'agent'])).code === 1, WAIT);
    const left = await waitFor(
      'owner references removed',
      async () => {
        const list = await json('get', 'pods', '-l', 'app=agent');
        return (list.items as any[]).every((pod) => !pod.metadata.ownerReferences?.length) && list.items;
      },
      WAIT,
    );
    expect((left as any[]).map((pod) => pod.metadata.name).sort()).toEqual(pods.map((pod) => pod.name).sort());
    await ok('delete', 'pods', '-l', 'app=agent', '--wait=false');
  });
});
