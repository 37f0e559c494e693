import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The StatefulSet controller in a real `skiff up`, driven by the real kubectl 1.36: web-0, web-1, web-2 made
// in order (each only once the one before is Running and Ready), `rollout status` to completion, claims made
// per volumeClaimTemplates (and kept when the set scales down), scale-down from the top, an image change
// rolled in reverse ordinal order, `rollout history` and `rollout undo`, and a delete taking pods, revisions
// and — with whenDeleted: Delete — claims along.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('statefulsets');
const cacheDir = tempDir('statefulsets-cache');
const WAIT = { timeoutMs: 30_000 };
let skiff: RunningSkiff;
const { ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);
const watches: ChildProcess[] = [];

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  for (const watch of watches) watch.kill('SIGTERM');
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const MANIFEST = `apiVersion: v1
kind: Service
metadata:
  name: nginx
spec:
  clusterIP: None
  selector:
    app: web
  ports:
  - port: 80
    name: web
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: nginx
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
          name: web
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
`;

interface PodEvent {
  type: string;
  name: string;
  terminating: boolean;
  ready: boolean;
  revision: string;
}

/**
 * `kubectl get pods -w --output-watch-events` on the set's pods, one line per event. Without --watch-only,
 * kubectl lists first and watches from the list's resourceVersion, so nothing after the list is missed;
 * at -v=6 it logs the watch request once the server answered it, which is when `started` resolves.
 */
function watchPods(): { events: () => PodEvent[]; started: Promise<void> } {
  const template =
    '{.type}|{.object.metadata.name}|{.object.metadata.deletionTimestamp}|{.object.status.phase}|' +
    '{.object.status.conditions[?(@.type=="Ready")].status}|{.object.metadata.labels.controller-revision-hash}{"\\n"}';
  const child = spawn(
    kubectl136.path,
    [
      '--kubeconfig',
      skiff.kubeconfig,
      '--cache-dir',
      cacheDir,
      'get',
      'pods',
      '-l',
      'app=web',
      '-w',
      '--output-watch-events',
      '-v=6',
      '-o',
      `jsonpath=${template}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  watches.push(child);
  let out = '';
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const started = new Promise<void>((resolveStarted, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (/url="[^"]*watch=true[^"]*" status="200 OK"/.test(log)) resolveStarted();
    });
    child.once('exit', (code) => reject(new Error(`kubectl get -w exited ${code}: ${log}`)));
  });
  const events = () =>
    out
      .split('\n')
      .filter((line) => line.includes('|'))
      .map((line) => {
        const [type, name, deletion, phase, ready, revision] = line.trim().split('|');
        return { type: type!, name: name!, terminating: Boolean(deletion), ready: phase === 'Running' && ready === 'True', revision: revision! };
      });
  return { events, started };
}

const indexOf = (events: PodEvent[], match: (event: PodEvent) => boolean): number => {
  const index = events.findIndex(match);
  expect(index, 'an expected pod event is missing').toBeGreaterThanOrEqual(0);
  return index;
};

function stopWatch(): void {
  watches.pop()?.kill('SIGTERM');
}

const podNames = async (): Promise<string[]> => (await json('get', 'pods', '-l', 'app=web')).items.map((pod: any) => pod.metadata.name).sort();
const claimUids = async (): Promise<Record<string, string>> =>
  Object.fromEntries((await json('get', 'pvc', '-l', 'app=web')).items.map((claim: any) => [claim.metadata.name, claim.metadata.uid]));

describe('StatefulSets through kubectl 1.36', () => {
  it('creates web-0, web-1, web-2 in order, each once the one before is Running and Ready, and rollout status completes', async () => {
    await waitFor('the default ServiceAccount', () => ok('get', 'serviceaccount', 'default'), CLUSTER_TIMEOUT);
    const watch = watchPods();
    await watch.started;
    expect(await apply(MANIFEST)).toBe('service/nginx created\nstatefulset.apps/web created\n');
    const status = await ok('rollout', 'status', 'sts/web', '--timeout=60s');
    // The API server defaults rollingUpdate.partition to 0, and kubectl reports any set with a partition so.
    expect(status.trim().split('\n').at(-1)).toBe('partitioned roll out complete: 3 new pods have been updated...');
    await waitFor('web-2 ready in the watch', async () => watch.events().some((e) => e.name === 'web-2' && e.ready), CLUSTER_TIMEOUT);
    const events = watch.events();
    stopWatch();
    expect(events.filter((e) => e.type === 'ADDED').map((e) => e.name)).toEqual(['web-0', 'web-1', 'web-2']);
    expect(indexOf(events, (e) => e.name === 'web-0' && e.ready)).toBeLessThan(indexOf(events, (e) => e.name === 'web-1'));
    expect(indexOf(events, (e) => e.name === 'web-1' && e.ready)).toBeLessThan(indexOf(events, (e) => e.name === 'web-2'));

    const sts = await json('get', 'sts', 'web');
    expect(sts.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, collisionCount: 0 });
    expect(sts.status.currentRevision).toBe(sts.status.updateRevision);
    expect(sts.status.observedGeneration).toBe(sts.metadata.generation);
    expect(await ok('get', 'sts', 'web', '--no-headers')).toMatch(/^web\s+3\/3\s+/);
  });

  it('gives each pod its identity and its own claim, made per volumeClaimTemplates and bound to a provisioned volume', async () => {
    const sts = await json('get', 'sts', 'web');
    for (const ordinal of [0, 1, 2]) {
      const pod = await json('get', 'pod', `web-${ordinal}`);
      expect(pod.metadata.labels).toEqual({
        app: 'web',
        'controller-revision-hash': sts.status.updateRevision,
        'statefulset.kubernetes.io/pod-name': `web-${ordinal}`,
        'apps.kubernetes.io/pod-index': String(ordinal),
      });
      expect(pod.metadata.ownerReferences).toEqual([
        { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: sts.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect([pod.spec.hostname, pod.spec.subdomain]).toEqual([`web-${ordinal}`, 'nginx']);
      expect(pod.spec.volumes).toContainEqual({ name: 'www', persistentVolumeClaim: { claimName: `www-web-${ordinal}` } });
      expect(pod.status.phase).toBe('Running');
    }
    // The dev preset's host-path storage binds each claim to a volume of the default class.
    const claims = await waitFor(
      'the claims to be Bound',
      async () => {
        const list = await json('get', 'pvc');
        return list.items.length === 3 && list.items.every((claim: any) => claim.status.phase === 'Bound') && list;
      },
      WAIT,
    );
    expect(
      claims.items.map((claim: any) => [
        claim.metadata.name,
        claim.metadata.labels,
        claim.spec.resources.requests.storage,
        claim.spec.storageClassName,
        claim.metadata.ownerReferences,
      ]),
    ).toEqual([0, 1, 2].map((ordinal) => [`www-web-${ordinal}`, { app: 'web' }, '1Gi', 'standard', undefined]));
    const revisions = await json('get', 'controllerrevisions', '-l', 'app=web');
    expect(revisions.items.map((revision: any) => [revision.metadata.name, revision.revision])).toEqual([[sts.status.updateRevision, 1]]);
  });

  it('scales down from the top, each pod gone before the next is deleted, keeping the claims; scaling up reuses them', async () => {
    const claims = await claimUids();
    const watch = watchPods();
    await watch.started;
    await ok('scale', 'sts', 'web', '--replicas=1');
    await waitFor('web-1 and web-2 gone', async () => (await podNames()).join() === 'web-0', WAIT);
    await waitFor('both deletions in the watch', async () => watch.events().filter((e) => e.type === 'DELETED').length === 2, CLUSTER_TIMEOUT);
    const events = watch.events();
    stopWatch();
    expect(events.filter((e) => e.type === 'DELETED').map((e) => e.name)).toEqual(['web-2', 'web-1']);
    expect(indexOf(events, (e) => e.type === 'DELETED' && e.name === 'web-2')).toBeLessThan(indexOf(events, (e) => e.name === 'web-1' && e.terminating));
    expect(await claimUids()).toEqual(claims);

    await ok('scale', 'sts', 'web', '--replicas=3');
    await ok('rollout', 'status', 'sts/web', '--timeout=60s');
    expect(await podNames()).toEqual(['web-0', 'web-1', 'web-2']);
    expect(await claimUids()).toEqual(claims);
  });

  it('rolls an image change in reverse ordinal order, each new pod ready before the next old one goes; history and undo', async () => {
    const before = await json('get', 'sts', 'web');
    const watch = watchPods();
    await watch.started;
    await ok('set', 'image', 'sts/web', 'nginx=nginx:1.26');
    const status = await ok('rollout', 'status', 'sts/web', '--timeout=60s');
    // kubectl prints a line when what it sees changes; which in-between state it catches depends on timing.
    expect(status).toMatch(/Waiting for (partitioned roll out to finish: [0-2] out of 3 new pods have been updated|1 pods to be ready)\.\.\./);
    expect(status.trim().split('\n').at(-1)).toBe('partitioned roll out complete: 3 new pods have been updated...');
    const after = await json('get', 'sts', 'web');
    const updateRevision = after.status.updateRevision;
    expect(updateRevision).not.toBe(before.status.updateRevision);
    expect(after.status).toMatchObject({ currentRevision: updateRevision, currentReplicas: 3, updatedReplicas: 3, readyReplicas: 3 });
    await waitFor(
      'web-0 ready at the new revision in the watch',
      async () => watch.events().some((e) => e.name === 'web-0' && e.revision === updateRevision && e.ready),
      CLUSTER_TIMEOUT,
    );
    const events = watch.events();
    stopWatch();
    expect(events.filter((e) => e.type === 'DELETED').map((e) => e.name)).toEqual(['web-2', 'web-1', 'web-0']);
    expect(indexOf(events, (e) => e.name === 'web-2' && e.revision === updateRevision && e.ready)).toBeLessThan(
      indexOf(events, (e) => e.name === 'web-1' && e.terminating),
    );
    expect(indexOf(events, (e) => e.name === 'web-1' && e.revision === updateRevision && e.ready)).toBeLessThan(
      indexOf(events, (e) => e.name === 'web-0' && e.terminating),
    );
    const images = await ok('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.containers[0].image} {end}');
    expect(images.trim()).toBe('web-0=nginx:1.26 web-1=nginx:1.26 web-2=nginx:1.26');

    const history = await ok('rollout', 'history', 'sts/web');
    expect(
      history
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.trim().split(/\s+/)[0]),
    ).toEqual(['REVISION', '1', '2']);
    await ok('rollout', 'undo', 'sts/web');
    await ok('rollout', 'status', 'sts/web', '--timeout=60s');
    const undone = await json('get', 'sts', 'web');
    expect(undone.status.updateRevision).toBe(before.status.updateRevision);
    expect(undone.spec.template.spec.containers[0].image).toBe('nginx:1.25');
    const undoneImages = await ok('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.spec.containers[0].image} {end}');
    expect(undoneImages.trim()).toBe('nginx:1.25 nginx:1.25 nginx:1.25');
    const revisions = await json('get', 'controllerrevisions', '-l', 'app=web');
    expect(Object.fromEntries(revisions.items.map((revision: any) => [revision.metadata.name, revision.revision]))).toEqual({
      [before.status.updateRevision]: 3,
      [updateRevision]: 2,
    });
  });

  it('deletes the claims with the set under whenDeleted: Delete, and the pods and revisions in any case', async () => {
    await ok('patch', 'sts', 'web', '-p', '{"spec":{"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete"}}}');
    const sts = await json('get', 'sts', 'web');
    await waitFor(
      'the claims owned by the set',
      async () => (await json('get', 'pvc', '-l', 'app=web')).items.every((claim: any) => claim.metadata.ownerReferences?.[0]?.uid === sts.metadata.uid),
      CLUSTER_TIMEOUT,
    );
    await ok('delete', 'sts', 'web');
    await waitFor(
      'pods, claims and revisions gone',
      async () =>
        (await json('get', 'pods', '-l', 'app=web')).items.length === 0 &&
        (await json('get', 'pvc', '-l', 'app=web')).items.length === 0 &&
        (await json('get', 'controllerrevisions', '-l', 'app=web')).items.length === 0,
      WAIT,
    );
  });
});
