import { RESOURCES, type Event, type Deployment, type Pod, type ReplicaSet } from '@skiff/api';
import replicaSetController from '@skiff/plugin-controller-replicaset';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import deploymentController from './index.js';
import { ANNOTATION, POD_TEMPLATE_HASH_LABEL } from './names.js';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { NEVER_READY_LABEL, reportPodsReady } from './test-support.js';

let plane: ControlPlane;
const kubelet = new AbortController();
beforeAll(async () => {
  plane = await startControlPlane([deploymentController, replicaSetController]);
  reportPodsReady(plane.client, plane.kernel.logger, kubelet.signal);
});
afterAll(async () => {
  kubelet.abort();
  await plane?.stop();
});

function deployment(name: string, spec: Partial<Deployment['spec']> = {}): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
      ...spec,
    },
  };
}

const getDeployment = (name: string) => plane.client.get<Deployment>(RESOURCES.deployments, name, 'default');

async function replicaSetsOf(d: Deployment): Promise<ReplicaSet[]> {
  const list = await plane.client.list<ReplicaSet>(RESOURCES.replicasets, 'default');
  return list.items.filter((rs) => rs.metadata.ownerReferences?.some((ref) => ref.uid === d.metadata.uid && ref.controller));
}

async function podsOf(app: string): Promise<Pod[]> {
  const list = await plane.client.list<Pod>(RESOURCES.pods, 'default', { labelSelector: `app=${app}` });
  return list.items.filter((pod) => !pod.metadata.deletionTimestamp);
}

/** kubectl rollout status' test: the latest spec observed, every pod updated and available, no old pod left. */
function rolledOut(d: Deployment): boolean {
  const status = d.status ?? {};
  if ((d.metadata.generation ?? 0) > (status.observedGeneration ?? 0)) return false;
  const progressing = status.conditions?.find((condition) => condition.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') throw new Error(`deployment "${d.metadata.name}" exceeded its progress deadline`);
  return (
    (status.updatedReplicas ?? 0) >= (d.spec.replicas ?? 1) &&
    (status.replicas ?? 0) <= (status.updatedReplicas ?? 0) &&
    (status.availableReplicas ?? 0) >= (status.updatedReplicas ?? 0)
  );
}

async function waitRolledOut(name: string): Promise<Deployment> {
  return waitFor(`deployment ${name} to roll out`, async () => {
    const d = await getDeployment(name);
    return rolledOut(d) && d;
  });
}

async function setImage(name: string, image: string): Promise<void> {
  const d = await getDeployment(name);
  const template = structuredClone(d.spec.template);
  template.spec.containers[0]!.image = image;
  await plane.client.patch(RESOURCES.deployments, name, { spec: { template } }, { namespace: 'default', patchType: 'merge' });
}

async function eventsOf(d: Deployment, reason: string): Promise<string[]> {
  const list = await plane.client.list<Event>(RESOURCES.events, 'default');
  return list.items.filter((event) => event.involvedObject.uid === d.metadata.uid && event.reason === reason).map((event) => event.message ?? '');
}

describe('Deployment controller against a real API server', () => {
  it('creates a ReplicaSet for the template and reports the rollout the way kubectl rollout status expects', async () => {
    const created = await plane.client.create<Deployment>(RESOURCES.deployments, deployment('web'), 'default');
    const done = await waitRolledOut('web');

    const [rs, ...others] = await replicaSetsOf(created);
    expect(others).toEqual([]);
    const hash = rs!.metadata.labels?.[POD_TEMPLATE_HASH_LABEL];
    expect(hash).toMatch(/^[a-z0-9]+$/);
    expect(rs!.metadata.name).toBe(`web-${hash}`);
    expect(rs!.spec.selector.matchLabels).toEqual({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    expect(rs!.spec.template.metadata?.labels).toEqual({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    expect(rs!.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(rs!.metadata.annotations).toMatchObject({ [ANNOTATION.REVISION]: '1', [ANNOTATION.DESIRED_REPLICAS]: '3', [ANNOTATION.MAX_REPLICAS]: '4' });
    expect(rs!.spec.replicas).toBe(3);

    expect(done.metadata.annotations?.[ANNOTATION.REVISION]).toBe('1');
    expect(done.status).toMatchObject({
      observedGeneration: done.metadata.generation,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
    expect(done.status?.unavailableReplicas ?? 0).toBe(0);
    expect(done.status?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }),
        expect.objectContaining({
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: `ReplicaSet "${rs!.metadata.name}" has successfully progressed.`,
        }),
      ]),
    );
    expect(await eventsOf(created, 'ScalingReplicaSet')).toEqual([`Scaled up replica set ${rs!.metadata.name} to 3`]);
    expect(await podsOf('web')).toHaveLength(3);
  });

  it('rolls a new template out within maxSurge and maxUnavailable, then scales the old ReplicaSet to zero', async () => {
    const created = await plane.client.create<Deployment>(
      RESOURCES.deployments,
      deployment('roll', { replicas: 4, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } }),
      'default',
    );
    await waitRolledOut('roll');
    const [first] = await replicaSetsOf(created);

    // Follow every ReplicaSet change of the rollout and check the strategy's bounds at each step.
    const watching = new AbortController();
    const latest = new Map<string, ReplicaSet>();
    const violations: string[] = [];
    const observed = (async () => {
      const list = await plane.client.list<ReplicaSet>(RESOURCES.replicasets, 'default');
      for await (const event of plane.client.watch<ReplicaSet>(RESOURCES.replicasets, 'default', {
        resourceVersion: list.metadata.resourceVersion,
        signal: watching.signal,
      })) {
        const rs = event.object as ReplicaSet;
        if (!rs.metadata.ownerReferences?.some((ref) => ref.uid === created.metadata.uid)) continue;
        if (event.type === 'DELETED') latest.delete(rs.metadata.uid!);
        else latest.set(rs.metadata.uid!, rs);
        const wanted = [...latest.values()].reduce((sum, one) => sum + (one.spec.replicas ?? 0), 0);
        if (wanted > 5) violations.push(`${wanted} pods asked for, more than replicas + maxSurge`);
      }
    })().catch((err) => {
      if (!watching.signal.aborted) violations.push(String(err));
    });

    await setImage('roll', 'nginx:1.26');
    const done = await waitFor('the new template to roll out', async () => {
      const d = await getDeployment('roll');
      return d.metadata.annotations?.[ANNOTATION.REVISION] === '2' && rolledOut(d) && d;
    });
    watching.abort();
    await observed;
    expect(violations).toEqual([]);

    const replicaSets = await replicaSetsOf(created);
    const next = replicaSets.find((rs) => rs.metadata.uid !== first!.metadata.uid)!;
    expect(replicaSets.find((rs) => rs.metadata.uid === first!.metadata.uid)?.spec.replicas).toBe(0);
    expect(next.spec.replicas).toBe(4);
    expect(next.spec.template.spec.containers[0]?.image).toBe('nginx:1.26');
    expect(next.metadata.annotations?.[ANNOTATION.REVISION]).toBe('2');
    expect(done.status).toMatchObject({ replicas: 4, updatedReplicas: 4, availableReplicas: 4 });
    const pods = await waitFor('only new pods', async () => {
      const current = await podsOf('roll');
      return current.length === 4 && current.every((pod) => pod.spec.containers[0]?.image === 'nginx:1.26') && current;
    });
    expect(pods).toHaveLength(4);
    const scaling = await eventsOf(created, 'ScalingReplicaSet');
    expect(scaling).toContain(`Scaled up replica set ${next.metadata.name} to 1`);
    expect(scaling).toContain(`Scaled down replica set ${first!.metadata.name} to 0`);
  });

  it('scales the current ReplicaSet when spec.replicas changes', async () => {
    const created = await plane.client.create<Deployment>(RESOURCES.deployments, deployment('resize', { replicas: 2 }), 'default');
    await waitRolledOut('resize');
    await plane.client.patch(RESOURCES.deployments, 'resize', { spec: { replicas: 5 } }, { namespace: 'default', patchType: 'merge' });
    const done = await waitFor('5 replicas', async () => {
      const d = await getDeployment('resize');
      return d.spec.replicas === 5 && rolledOut(d) && d;
    });
    const [rs] = await replicaSetsOf(created);
    expect(rs!.spec.replicas).toBe(5);
    expect(rs!.metadata.annotations?.[ANNOTATION.DESIRED_REPLICAS]).toBe('5');
    expect(done.status?.availableReplicas).toBe(5);
    expect(await eventsOf(created, 'ScalingReplicaSet')).toContain(`Scaled up replica set ${rs!.metadata.name} to 5`);
  });

  it('with Recreate, scales the new ReplicaSet up only once every old pod is gone', async () => {
    const created = await plane.client.create<Deployment>(RESOURCES.deployments, deployment('recreate', { strategy: { type: 'Recreate' } }), 'default');
    await waitRolledOut('recreate');
    const [old] = await replicaSetsOf(created);

    const watching = new AbortController();
    const oldPods = new Set((await podsOf('recreate')).map((pod) => pod.metadata.name));
    const order: string[] = [];
    const list = await plane.client.list<Pod>(RESOURCES.pods, 'default');
    const observed = (async () => {
      for await (const event of plane.client.watch<Pod>(RESOURCES.pods, 'default', {
        resourceVersion: list.metadata.resourceVersion,
        signal: watching.signal,
      })) {
        const pod = event.object as Pod;
        if (pod.metadata.labels?.app !== 'recreate') continue;
        if (event.type === 'DELETED' && oldPods.delete(pod.metadata.name)) order.push(`old pod gone (${oldPods.size} left)`);
        if (event.type === 'ADDED') order.push(oldPods.size === 0 ? 'new pod after old ones' : 'new pod while old ones ran');
      }
    })().catch(() => undefined);

    await setImage('recreate', 'nginx:1.26');
    await waitFor('the new template to roll out', async () => {
      const d = await getDeployment('recreate');
      return d.metadata.annotations?.[ANNOTATION.REVISION] === '2' && rolledOut(d);
    });
    await waitFor('3 new pods seen', () => order.filter((step) => step.startsWith('new pod')).length === 3);
    watching.abort();
    await observed;
    expect(order).toEqual([
      'old pod gone (2 left)',
      'old pod gone (1 left)',
      'old pod gone (0 left)',
      'new pod after old ones',
      'new pod after old ones',
      'new pod after old ones',
    ]);
    const replicaSets = await replicaSetsOf(created);
    expect(replicaSets.find((rs) => rs.metadata.uid === old!.metadata.uid)?.spec.replicas).toBe(0);
  });

  it('does not roll out while paused, and says so; resuming rolls out', async () => {
    const created = await plane.client.create<Deployment>(RESOURCES.deployments, deployment('paused', { replicas: 1 }), 'default');
    await waitRolledOut('paused');
    await plane.client.patch(RESOURCES.deployments, 'paused', { spec: { paused: true } }, { namespace: 'default', patchType: 'merge' });
    await setImage('paused', 'nginx:1.26');
    const paused = await waitFor('the paused condition', async () => {
      const d = await getDeployment('paused');
      const progressing = d.status?.conditions?.find((condition) => condition.type === 'Progressing');
      return progressing?.reason === 'DeploymentPaused' && (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && d;
    });
    expect(paused.status?.conditions?.find((condition) => condition.type === 'Progressing')).toMatchObject({
      status: 'Unknown',
      message: 'Deployment is paused',
    });
    expect(await replicaSetsOf(created)).toHaveLength(1);

    await plane.client.patch(RESOURCES.deployments, 'paused', { spec: { paused: null } }, { namespace: 'default', patchType: 'merge' });
    const resumed = await waitFor('the rollout after resume', async () => {
      const d = await getDeployment('paused');
      return d.metadata.annotations?.[ANNOTATION.REVISION] === '2' && rolledOut(d) && d;
    });
    expect(resumed.status?.updatedReplicas).toBe(1);
    expect(await replicaSetsOf(created)).toHaveLength(2);
  });

  it('keeps only revisionHistoryLimit old ReplicaSets', async () => {
    const created = await plane.client.create<Deployment>(RESOURCES.deployments, deployment('history', { replicas: 1, revisionHistoryLimit: 1 }), 'default');
    for (const [revision, image] of [
      ['2', 'nginx:1.26'],
      ['3', 'nginx:1.27'],
    ] as const) {
      await waitRolledOut('history');
      await setImage('history', image);
      await waitFor(`revision ${revision}`, async () => {
        const d = await getDeployment('history');
        return d.metadata.annotations?.[ANNOTATION.REVISION] === revision && rolledOut(d);
      });
    }
    const kept = await waitFor('the oldest ReplicaSet to be deleted', async () => {
      const replicaSets = await replicaSetsOf(created);
      return replicaSets.length === 2 && replicaSets;
    });
    expect(kept.map((rs) => rs.metadata.annotations?.[ANNOTATION.REVISION]).sort()).toEqual(['2', '3']);
  });

  it('adopts an orphan ReplicaSet that matches its selector and template instead of creating one', async () => {
    const spec = deployment('adopt').spec;
    const orphan: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'adopt-orphan', namespace: 'default', labels: { app: 'adopt' } },
      spec: { replicas: 3, selector: spec.selector, template: spec.template },
    };
    await plane.client.create<ReplicaSet>(RESOURCES.replicasets, orphan, 'default');
    const created = await plane.client.create<Deployment>(RESOURCES.deployments, deployment('adopt'), 'default');
    await waitRolledOut('adopt');
    const replicaSets = await replicaSetsOf(created);
    expect(replicaSets.map((rs) => rs.metadata.name)).toEqual(['adopt-orphan']);
    expect(replicaSets[0]!.metadata.annotations?.[ANNOTATION.REVISION]).toBe('1');
  });

  it('gives its new ReplicaSet the revision after an adopted one, exactly, beyond what a number holds', async () => {
    const spec = deployment('big-revision').spec;
    const adopted: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'big-revision-old',
        namespace: 'default',
        labels: { app: 'big-revision', pod: 'old' },
        annotations: { [ANNOTATION.REVISION]: '3546343826724305832' },
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'big-revision', pod: 'old' } },
        template: { metadata: { labels: { app: 'big-revision', pod: 'old' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.24' }] } },
      },
    };
    await plane.client.create<ReplicaSet>(RESOURCES.replicasets, adopted, 'default');
    const created = await plane.client.create<Deployment>(
      RESOURCES.deployments,
      deployment('big-revision', { replicas: 1, selector: spec.selector }),
      'default',
    );
    const done = await waitFor('revision 3546343826724305833', async () => {
      const d = await getDeployment('big-revision');
      return d.metadata.annotations?.[ANNOTATION.REVISION] === '3546343826724305833' && rolledOut(d) && d;
    });
    expect(done.metadata.uid).toBe(created.metadata.uid);
    const replicaSets = await replicaSetsOf(created);
    const revisions = Object.fromEntries(replicaSets.map((rs) => [rs.metadata.name, rs.metadata.annotations?.[ANNOTATION.REVISION]]));
    expect(revisions['big-revision-old']).toBe('3546343826724305832');
    expect(Object.values(revisions).sort()).toEqual(['3546343826724305832', '3546343826724305833']);
  });

  it('rolls back to an earlier template by making its ReplicaSet the newest revision again', async () => {
    const created = await plane.client.create<Deployment>(RESOURCES.deployments, deployment('undo', { replicas: 2 }), 'default');
    await waitRolledOut('undo');
    const [first] = await replicaSetsOf(created);
    await setImage('undo', 'nginx:1.26');
    await waitFor('revision 2', async () => {
      const d = await getDeployment('undo');
      return d.metadata.annotations?.[ANNOTATION.REVISION] === '2' && rolledOut(d);
    });

    // What kubectl rollout undo sends: the old ReplicaSet's template without its pod-template-hash label.
    const template = structuredClone(first!.spec.template);
    delete template.metadata!.labels![POD_TEMPLATE_HASH_LABEL];
    await plane.client.patch(RESOURCES.deployments, 'undo', [{ op: 'replace', path: '/spec/template', value: template }], {
      namespace: 'default',
      patchType: 'json',
    });
    const done = await waitFor('revision 3', async () => {
      const d = await getDeployment('undo');
      return d.metadata.annotations?.[ANNOTATION.REVISION] === '3' && rolledOut(d) && d;
    });
    const replicaSets = await replicaSetsOf(done);
    expect(replicaSets).toHaveLength(2);
    const revived = replicaSets.find((rs) => rs.metadata.uid === first!.metadata.uid)!;
    expect(revived.spec.replicas).toBe(2);
    expect(revived.metadata.annotations).toMatchObject({ [ANNOTATION.REVISION]: '3', [ANNOTATION.REVISION_HISTORY]: '1' });
    expect(replicaSets.find((rs) => rs !== revived)?.spec.replicas).toBe(0);
  });

  it('reports ProgressDeadlineExceeded when new pods never become available', async () => {
    const spec = deployment('stuck', { replicas: 1, progressDeadlineSeconds: 1 }).spec;
    spec.template.metadata!.labels![NEVER_READY_LABEL] = 'true';
    await plane.client.create<Deployment>(RESOURCES.deployments, { ...deployment('stuck'), spec }, 'default');
    const stuck = await waitFor(
      'the progress deadline to pass',
      async () => {
        const d = await getDeployment('stuck');
        const progressing = d.status?.conditions?.find((condition) => condition.type === 'Progressing');
        return progressing?.reason === 'ProgressDeadlineExceeded' && d;
      },
      { timeoutMs: 6_000 },
    );
    expect(stuck.status?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }),
        expect.objectContaining({ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }),
      ]),
    );
    expect(() => rolledOut(stuck)).toThrow('deployment "stuck" exceeded its progress deadline');
  });
});
