import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type Lease, type Pod } from '@skiff/api';
import { writeKubeconfig } from '@skiff/client';
import { definePlugin, Kernel } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import schedulerPlugin from './index.js';
import { makeNode, makePod } from './test-support/objects.js';
import { FreezableRelay } from '@skiff/testing';

// Seconds, as in the options: short, with room for a busy machine.
const LEADER_ELECTION = { leaderElect: true, leaseDuration: 2, renewDeadline: 1.2, retryPeriod: 0.3, resourceName: 'scheduler-handover' };

/** A scheduler plugin that notes which scheduler bound each pod (a plugin instance per scheduler). */
function bindingRecorder(scheduler: string, bound: Map<string, string>) {
  return definePlugin({
    name: `test-recorder-${scheduler}`,
    version: '0.1.0',
    kernel: '^0.1.0',
    apply(kernel) {
      kernel.hooks.schedulerPlugins.tap(`test-recorder-${scheduler}`, (registry) =>
        registry.register({ name: 'BindingRecorder', postBind: (_state, pod) => void bound.set(pod.metadata.name!, scheduler) }),
      );
    },
  });
}

let cluster: ControlPlane;
const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  // No scheduler in the control plane itself: the tests start their own, each in a kernel of its own.
  cluster = await startControlPlane([], { enabled: [], config: { logLevel: 'silent' } });
  await cluster.client.create(RESOURCES.nodes, makeNode('node-1'));
});
afterAll(() => cluster?.stop());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A scheduler reaching the control plane over HTTPS with an admin kubeconfig (through `server`, default directly). */
async function remoteScheduler(name: string, bound: Map<string, string>, options: Record<string, unknown>, server?: string): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), `skiff-scheduler-${name}-`));
  const { url, caPem } = cluster.kernel.resolve('apiServerInfo');
  const token = cluster.kernel.resolve('apiHandler').issueLoopbackToken({ username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
  writeKubeconfig(join(dir, 'admin.kubeconfig'), { server: server ?? url, caPem, token });
  const kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, logLevel: process.env.SKIFF_TEST_LOG ?? 'silent' } });
  kernel.use(schedulerPlugin, { kubeconfig: 'admin.kubeconfig', ...options }).use(bindingRecorder(name, bound));
  await kernel.start();
  const stop = async () => {
    await kernel.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.push(stop);
  return stop;
}

async function boundBy(bound: Map<string, string>, name: string): Promise<string> {
  await cluster.client.create(RESOURCES.pods, makePod(name), 'default');
  await waitFor(`${name} to be bound`, async () => (await cluster.client.get<Pod>(RESOURCES.pods, name, 'default')).spec.nodeName);
  return waitFor(`the scheduler that bound ${name}`, () => bound.get(name));
}

describe('the scheduler with leader election', () => {
  it('schedules with one copy only, hands over when the leader stops renewing, and schedules again when it leads again', async () => {
    const bound = new Map<string, string>();
    const relay = await new FreezableRelay(new URL(cluster.kernel.resolve('apiServerInfo').url)).start();
    cleanups.push(() => relay.close());
    await remoteScheduler('a', bound, { leaderElection: LEADER_ELECTION }, relay.url);
    const lease = () => cluster.client.get<Lease>(RESOURCES.leases, LEADER_ELECTION.resourceName, 'kube-system');
    await waitFor('a to hold the lease', async () => (await lease().catch(() => undefined))?.spec?.holderIdentity);
    const stopB = await remoteScheduler('b', bound, { leaderElection: LEADER_ELECTION });
    expect(await boundBy(bound, 'first')).toBe('a');
    const heldByA = (await lease()).spec!.holderIdentity;

    // a's API server stops answering: a stops scheduling at its renew deadline, b takes the lease once it ran out.
    relay.frozen = true;
    await waitFor('b to hold the lease', async () => (await lease()).spec?.holderIdentity !== heldByA, { timeoutMs: 10_000 });
    expect(await boundBy(bound, 'second')).toBe('b');

    // a is reachable again but b leads; when b stops it releases the lease and a schedules afresh.
    relay.thaw();
    await stopB();
    cleanups.splice(cleanups.indexOf(stopB), 1);
    await waitFor('a to hold the lease again', async () => (await lease()).spec?.holderIdentity === heldByA, { timeoutMs: 10_000 });
    expect(await boundBy(bound, 'third')).toBe('a');
    expect((await lease()).spec?.leaseTransitions).toBe(2);
  });

  it('names the Lease kube-system/kube-scheduler by default, and refuses servers without a kubeconfig', async () => {
    const bound = new Map<string, string>();
    await remoteScheduler('default-lease', bound, { leaderElection: { ...LEADER_ELECTION, resourceName: undefined } });
    await waitFor('the kube-scheduler lease', async () =>
      (await cluster.client.get<Lease>(RESOURCES.leases, 'kube-scheduler', 'kube-system').catch(() => undefined))?.spec?.holderIdentity?.includes('_'),
    );
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(schedulerPlugin, { servers: ['https://10.0.0.1:6443'] })).toThrow(
      'option "servers" needs "kubeconfig" (the servers share its CA and credentials)',
    );
  });
});
