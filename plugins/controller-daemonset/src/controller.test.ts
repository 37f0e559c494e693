import { readFileSync } from 'node:fs';
import { RESOURCES, type ControllerRevision, type DaemonSet, type Event, type Node, type Pod } from '@skiff/api';
import kubelet from '@skiff/kubelet';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import nodeAffinity from '@skiff/plugin-scheduler-node-affinity';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import daemonSetController from './index.js';
import { CONTROLLER_REVISION_HASH_LABEL, TEMPLATE_GENERATION_LABEL } from './names.js';

// The controller with a scheduler (NodeAffinity sends each pod to the node its affinity names) that binds its pods and three simulated kubelets that run them: every
// placement, readiness and status count comes from the real parts.

const ns = 'default';
const NODES = ['node-1', 'node-2', 'node-3'];
const WAIT = { timeoutMs: 20_000 };
let plane: ControlPlane;

beforeAll(async () => {
  plane = await startControlPlane([daemonSetController, scheduler, nodeAffinity, resourcesFit, [kubelet, { heartbeatSeconds: 1 }], criSimulated, networkIpam], {
    config: { nodes: 3, logLevel: 'silent' },
  });
  await waitFor('3 nodes', async () => (await plane.client.list<Node>(RESOURCES.nodes)).items.length === 3, WAIT);
});
afterAll(async () => {
  await plane?.stop();
});

function daemonSet(name: string, spec: Partial<DaemonSet['spec']> = {}, image = 'nginx:1.25'): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: ns },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'agent', image }] } },
      ...spec,
    },
  };
}

async function livePods(ds: DaemonSet): Promise<Pod[]> {
  const list = await plane.client.list<Pod>(RESOURCES.pods, ns, { labelSelector: `app=${ds.metadata.name}` });
  return list.items.filter((pod) => !pod.metadata.deletionTimestamp && pod.metadata.ownerReferences?.some((ref) => ref.uid === ds.metadata.uid));
}

async function getDs(name: string): Promise<DaemonSet> {
  return plane.client.get<DaemonSet>(RESOURCES.daemonsets, name, ns);
}

/** Running pods, one per listed node, and nothing elsewhere. */
async function runningOn(ds: DaemonSet, nodes: string[], image?: string): Promise<Pod[]> {
  return waitFor(
    `${ds.metadata.name} running on ${nodes.join(', ')}`,
    async () => {
      const pods = await livePods(ds);
      const ok =
        pods.length === nodes.length &&
        pods.every((pod) => pod.status?.phase === 'Running' && (!image || pod.spec.containers[0]!.image === image)) &&
        [...pods.map((pod) => pod.spec.nodeName)].sort().join() === [...nodes].sort().join();
      return ok && pods;
    },
    WAIT,
  );
}

async function settled(name: string, desired: number): Promise<DaemonSet> {
  return waitFor(
    `${name} settled at ${desired}`,
    async () => {
      const ds = await getDs(name);
      const s = ds.status;
      return (
        s &&
        s.observedGeneration === ds.metadata.generation &&
        s.desiredNumberScheduled === desired &&
        s.currentNumberScheduled === desired &&
        s.updatedNumberScheduled === desired &&
        s.numberAvailable === desired &&
        s.numberReady === desired &&
        ds
      );
    },
    WAIT,
  );
}

describe('DaemonSet controller with a scheduler and three kubelets', () => {
  it('runs one pod per node, bound through the scheduler by node affinity, and reports it', async () => {
    const ds = await plane.client.create<DaemonSet>(RESOURCES.daemonsets, daemonSet('agent'), ns);
    const pods = await runningOn(ds, NODES);
    const revisions = (await plane.client.list<ControllerRevision>(RESOURCES.controllerrevisions, ns, { labelSelector: 'app=agent' })).items;
    expect(revisions).toHaveLength(1);
    const hash = revisions[0]!.metadata.labels![CONTROLLER_REVISION_HASH_LABEL]!;
    expect(revisions[0]).toMatchObject({ revision: 1, metadata: { name: `agent-${hash}` } });
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(/^agent-[a-z0-9]{5}$/);
      expect(pod.metadata.labels).toEqual({ app: 'agent', [CONTROLLER_REVISION_HASH_LABEL]: hash, [TEMPLATE_GENERATION_LABEL]: '1' });
      expect(pod.metadata.ownerReferences).toEqual([
        { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(pod.spec.affinity).toEqual({
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [pod.spec.nodeName] }] }],
          },
        },
      });
      expect(pod.spec.tolerations).toEqual(
        expect.arrayContaining([
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
          { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
        ]),
      );
    }
    const status = (await settled('agent', 3)).status!;
    expect(status).toMatchObject({ numberMisscheduled: 0, numberUnavailable: 0 });
    const events = (await plane.client.list<Event>(RESOURCES.events, ns)).items.filter(
      (event) => event.involvedObject.uid === ds.metadata.uid && event.reason === 'SuccessfulCreate',
    );
    expect(events.map((event) => event.message).sort()).toEqual(pods.map((pod) => `Created pod: ${pod.metadata.name}`).sort());
  });

  it('replaces a deleted pod on the same node', async () => {
    const ds = await plane.client.create<DaemonSet>(RESOURCES.daemonsets, daemonSet('heal'), ns);
    const pods = await runningOn(ds, NODES);
    const victim = pods.find((pod) => pod.spec.nodeName === 'node-2')!;
    await plane.client.delete(RESOURCES.pods, victim.metadata.name!, ns, { gracePeriodSeconds: 0 });
    const healed = await waitFor(
      'a replacement on node-2',
      async () => {
        const current = await runningOn(ds, NODES);
        return !current.some((pod) => pod.metadata.name === victim.metadata.name) && current;
      },
      WAIT,
    );
    expect(healed.find((pod) => pod.spec.nodeName === 'node-2')!.metadata.name).not.toBe(victim.metadata.name);
  });

  it('follows node labels: a nodeSelector narrows it, labelling a node adds a pod, unlabelling removes it', async () => {
    await plane.client.patch(RESOURCES.nodes, 'node-1', { metadata: { labels: { 'skiff.test/ssd': 'yes' } } }, { patchType: 'merge' });
    const ds = await plane.client.create<DaemonSet>(
      RESOURCES.daemonsets,
      daemonSet('ssd', {
        template: { metadata: { labels: { app: 'ssd' } }, spec: { nodeSelector: { 'skiff.test/ssd': 'yes' }, containers: [{ name: 'a', image: 'busybox' }] } },
      }),
      ns,
    );
    await runningOn(ds, ['node-1']);
    expect((await settled('ssd', 1)).status!.numberMisscheduled).toBe(0);

    await plane.client.patch(RESOURCES.nodes, 'node-3', { metadata: { labels: { 'skiff.test/ssd': 'yes' } } }, { patchType: 'merge' });
    await runningOn(ds, ['node-1', 'node-3']);
    await plane.client.patch(RESOURCES.nodes, 'node-1', { metadata: { labels: { 'skiff.test/ssd': null } } }, { patchType: 'merge' });
    await runningOn(ds, ['node-3']);
    await settled('ssd', 1);
  });

  it('keeps off a node with an untolerated NoSchedule taint, and goes there once tolerated', async () => {
    await plane.client.patch(
      RESOURCES.nodes,
      'node-2',
      { spec: { taints: [{ key: 'skiff.test/dedicated', value: 'db', effect: 'NoSchedule' }] } },
      { patchType: 'merge' },
    );
    try {
      const ds = await plane.client.create<DaemonSet>(RESOURCES.daemonsets, daemonSet('tainted'), ns);
      await runningOn(ds, ['node-1', 'node-3']);
      await settled('tainted', 2);
      await plane.client.patch(
        RESOURCES.daemonsets,
        'tainted',
        { spec: { template: { spec: { tolerations: [{ key: 'skiff.test/dedicated', operator: 'Exists', effect: 'NoSchedule' }] } } } },
        { namespace: ns, patchType: 'strategic' },
      );
      await runningOn(ds, NODES);
      await settled('tainted', 3);
    } finally {
      await plane.client.patch(RESOURCES.nodes, 'node-2', { spec: { taints: null } }, { patchType: 'merge' });
    }
  });

  it('rolls a template change through node by node, keeps the old revision, and rolls back to it', async () => {
    const ds = await plane.client.create<DaemonSet>(RESOURCES.daemonsets, daemonSet('roll'), ns);
    const first = await runningOn(ds, NODES);
    await settled('roll', 3);

    // Watch the pods while the update runs: with maxUnavailable 1, never fewer than two running at once.
    let fewest = 3;
    const watching = setInterval(() => {
      void livePods(ds).then((pods) => (fewest = Math.min(fewest, pods.filter((pod) => pod.status?.phase === 'Running').length)));
    }, 20);
    await plane.client.patch(
      RESOURCES.daemonsets,
      'roll',
      { spec: { template: { spec: { containers: [{ name: 'agent', image: 'nginx:1.27' }] } } } },
      { namespace: ns, patchType: 'strategic' },
    );
    const second = await runningOn(ds, NODES, 'nginx:1.27');
    clearInterval(watching);
    expect(fewest).toBeGreaterThanOrEqual(2);
    expect(second.map((pod) => pod.metadata.name)).not.toEqual(expect.arrayContaining([first[0]!.metadata.name]));
    const updated = await settled('roll', 3);
    expect(updated.metadata.generation).toBe(2);
    expect(second.every((pod) => pod.metadata.labels![TEMPLATE_GENERATION_LABEL] === '2')).toBe(true);

    const revisions = (await plane.client.list<ControllerRevision>(RESOURCES.controllerrevisions, ns, { labelSelector: 'app=roll' })).items.sort(
      (a, b) => a.revision - b.revision,
    );
    expect(revisions.map((revision) => revision.revision)).toEqual([1, 2]);
    const firstHash = first[0]!.metadata.labels![CONTROLLER_REVISION_HASH_LABEL];
    expect(revisions[0]!.metadata.labels![CONTROLLER_REVISION_HASH_LABEL]).toBe(firstHash);

    // What `kubectl rollout undo` does: send revision 1's data back as a strategic merge patch.
    await plane.client.patch(RESOURCES.daemonsets, 'roll', revisions[0]!.data, { namespace: ns, patchType: 'strategic' });
    const third = await runningOn(ds, NODES, 'nginx:1.25');
    expect(third.every((pod) => pod.metadata.labels![CONTROLLER_REVISION_HASH_LABEL] === firstHash)).toBe(true);
    await settled('roll', 3);
    const after = (await plane.client.list<ControllerRevision>(RESOURCES.controllerrevisions, ns, { labelSelector: 'app=roll' })).items;
    expect(after.find((revision) => revision.metadata.labels![CONTROLLER_REVISION_HASH_LABEL] === firstHash)!.revision).toBe(3);
    expect(after).toHaveLength(2);
  });

  it('writes revision data that is, byte for byte, what upstream writes for the same template', async () => {
    // The template of upstream's e2e DaemonSets, and the data kube-controller-manager v1.28.7 writes for it.
    const fixture = (JSON.parse(readFileSync(new URL('../test-data/revision-data.json', import.meta.url), 'utf8')) as { name: string; data: string }[]).find(
      (entry) => entry.name === 'e2e',
    )!;
    const template = {
      metadata: { labels: { 'daemonset-name': 'daemon-set' } },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/e2e-test-images/httpd:2.4.38-4', ports: [{ containerPort: 9376 }] }] },
    };
    const ds = await plane.client.create<DaemonSet>(
      RESOURCES.daemonsets,
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'daemon-set', namespace: ns },
        spec: { selector: { matchLabels: template.metadata.labels }, template },
      },
      ns,
    );
    const revision = await waitFor('a ControllerRevision', async () => {
      const list = await plane.client.list<ControllerRevision>(RESOURCES.controllerrevisions, ns, { labelSelector: 'daemonset-name=daemon-set' });
      return list.items.find((item) => item.metadata.ownerReferences?.some((ref) => ref.uid === ds.metadata.uid));
    });
    expect(JSON.stringify(revision.data)).toBe(fixture.data);
    await plane.client.delete(RESOURCES.daemonsets, 'daemon-set', ns);
  });

  it('with maxSurge starts the new pod beside the old one before removing it', async () => {
    const ds = await plane.client.create<DaemonSet>(
      RESOURCES.daemonsets,
      daemonSet('surge', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } }),
      ns,
    );
    await runningOn(ds, NODES);
    await settled('surge', 3);
    let fewestRunning = 3;
    let most = 3;
    const watching = setInterval(() => {
      void livePods(ds).then((pods) => {
        fewestRunning = Math.min(fewestRunning, pods.filter((pod) => pod.status?.phase === 'Running').length);
        most = Math.max(most, pods.length);
      });
    }, 20);
    await plane.client.patch(
      RESOURCES.daemonsets,
      'surge',
      { spec: { template: { spec: { containers: [{ name: 'agent', image: 'nginx:1.27' }] } } } },
      { namespace: ns, patchType: 'strategic' },
    );
    await runningOn(ds, NODES, 'nginx:1.27');
    await settled('surge', 3);
    clearInterval(watching);
    expect(fewestRunning).toBe(3);
    expect(most).toBe(4);
  });

  it('with OnDelete leaves running pods alone and makes replacements from the new template', async () => {
    const ds = await plane.client.create<DaemonSet>(RESOURCES.daemonsets, daemonSet('ondelete', { updateStrategy: { type: 'OnDelete' } }), ns);
    const before = await runningOn(ds, NODES);
    await settled('ondelete', 3);
    await plane.client.patch(
      RESOURCES.daemonsets,
      'ondelete',
      { spec: { template: { spec: { containers: [{ name: 'agent', image: 'nginx:1.27' }] } } } },
      { namespace: ns, patchType: 'strategic' },
    );
    const status = await waitFor(
      'generation 2 observed',
      async () => {
        const current = await getDs('ondelete');
        return current.status?.observedGeneration === 2 && current.status;
      },
      WAIT,
    );
    expect(status).toMatchObject({ desiredNumberScheduled: 3, updatedNumberScheduled: 0 });
    expect((await livePods(ds)).map((pod) => pod.metadata.name).sort()).toEqual(before.map((pod) => pod.metadata.name).sort());

    const victim = before.find((pod) => pod.spec.nodeName === 'node-1')!;
    await plane.client.delete(RESOURCES.pods, victim.metadata.name!, ns, { gracePeriodSeconds: 0 });
    const replacement = await waitFor(
      'a new-template pod on node-1',
      async () =>
        (await livePods(ds)).find((pod) => pod.spec.nodeName === 'node-1' && pod.spec.containers[0]!.image === 'nginx:1.27' && pod.status?.phase === 'Running'),
      WAIT,
    );
    expect(replacement.metadata.name).not.toBe(victim.metadata.name);
    await waitFor('updatedNumberScheduled 1', async () => (await getDs('ondelete')).status?.updatedNumberScheduled === 1, WAIT);
  });

  it('replaces a failed pod, with a FailedDaemonPod warning', async () => {
    const ds = await plane.client.create<DaemonSet>(RESOURCES.daemonsets, daemonSet('failing'), ns);
    const pods = await runningOn(ds, NODES);
    const victim = pods.find((pod) => pod.spec.nodeName === 'node-1')!;
    await plane.client.updateStatus<Pod>(RESOURCES.pods, { ...victim, status: { ...victim.status, phase: 'Failed', reason: 'Evicted' } });
    await waitFor(
      'a replacement on node-1',
      async () => {
        const current = await runningOn(ds, NODES);
        return !current.some((pod) => pod.metadata.name === victim.metadata.name) && current;
      },
      WAIT,
    );
    const warnings = (await plane.client.list<Event>(RESOURCES.events, ns)).items.filter(
      (event) => event.involvedObject.uid === ds.metadata.uid && event.reason === 'FailedDaemonPod',
    );
    expect(warnings.map((event) => [event.type, event.message])).toEqual([
      ['Warning', `Found failed daemon pod ${ns}/${victim.metadata.name} on node node-1, will try to kill it`],
    ]);
  });

  it('adopts a matching orphan on its node instead of creating a second pod there', async () => {
    const orphan: Pod = {
      metadata: { name: 'adopt-orphan', namespace: ns, labels: { app: 'adopt' } },
      spec: { nodeName: 'node-3', containers: [{ name: 'agent', image: 'nginx:1.25' }] },
    };
    await plane.client.create<Pod>(RESOURCES.pods, orphan, ns);
    // OnDelete: a RollingUpdate would replace the adopted pod, which carries no revision label.
    const ds = await plane.client.create<DaemonSet>(RESOURCES.daemonsets, daemonSet('adopt', { updateStrategy: { type: 'OnDelete' } }), ns);
    const pods = await runningOn(ds, NODES);
    expect(pods.find((pod) => pod.spec.nodeName === 'node-3')!.metadata.name).toBe('adopt-orphan');
    await waitFor(
      'the adopted pod counted, not as updated',
      async () => {
        const status = (await getDs('adopt')).status;
        return status?.currentNumberScheduled === 3 && status.numberReady === 3 && status.updatedNumberScheduled === 2;
      },
      WAIT,
    );
  });
});
