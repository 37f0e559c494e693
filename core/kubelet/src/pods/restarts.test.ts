import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '@skiff/api';
import type { ContainerRuntime } from '@skiff/kernel';
import { ipamNetwork, simulatedRuntime } from '../test-support/node-parts.js';
import { boundPod } from '../test-support/objects.js';
import { runtimeManager } from '../test-support/runtime-manager.js';
import { CrashLoopBackOff } from './crash-loop-backoff.js';
import { buildPodStatus } from './pod-status.js';
import type { PodObservation } from './pod-runtime.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-restarts-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const context = { hostIP: '127.0.0.1', runtimeName: 'simulated', now: '2026-01-01T00:00:00Z' };

/** A pod whose container exits with code 3 as soon as it starts (the simulated runtime's annotations). */
function crasher(): Pod {
  const pod = boundPod('web-1');
  pod.metadata.annotations = { 'skiff.io/simulate-run-ms': '0', 'skiff.io/simulate-exit-code': '3' };
  return pod;
}

/** The moment the container's instance `attempt` exited, once it has (the simulated process ends on a timer). */
async function exitOf(runtime: ContainerRuntime, attempt: number): Promise<number> {
  for (;;) {
    const instance = (await runtime.listContainers()).find((container) => container.metadata.attempt === attempt);
    if (instance?.state === 'CONTAINER_EXITED') return instance.finishedAt!;
    await sleep(5);
  }
}

async function setUp() {
  const runtime = await simulatedRuntime(join(dataDir, 'node'));
  const network = await ipamNetwork(join(dataDir, 'ipam'));
  // The back-off reads a clock the test sets, so how long a sync takes on a busy machine changes nothing.
  const clock: { now?: number } = {};
  const backOff = new CrashLoopBackOff({ initialMs: 200, maxMs: 400, now: () => clock.now ?? Date.now() });
  const { manager } = runtimeManager({ runtime, network, dataDir: join(dataDir, 'node'), backOff });
  const events: string[] = [];
  const sink = (type: string, reason: string, message: string) => void events.push(`${type} ${reason}: ${message}`);
  return { runtime, manager, events, sink, clock };
}

describe('restarts', () => {
  it('restarts a crashed container at once, then waits in CrashLoopBackOff, doubling the wait', async () => {
    const { runtime, manager, events, sink, clock } = await setUp();
    let pod = crasher();
    const statusOf = (observed: PodObservation) => {
      const status = buildPodStatus(pod, observed, context);
      pod = { ...pod, status };
      return status;
    };
    statusOf(await manager.sync(pod, sink));
    await exitOf(runtime, 0);

    const restarted = await manager.sync(pod, sink);
    expect(restarted.containers[0]).toMatchObject({ restartCount: 1 });
    expect(restarted.retryAfterMs).toBeUndefined();
    const first = statusOf(restarted).containerStatuses![0]!;
    expect(first.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    const exited = await exitOf(runtime, 1);
    clock.now = exited + 20;

    const backingOff = await manager.sync(pod, sink);
    expect(backingOff.containers[0]!.waiting).toEqual({
      reason: 'CrashLoopBackOff',
      message: 'back-off 200ms restarting failed container=web pod=web-1_default(uid-web-1)',
    });
    expect(backingOff.incomplete).toBe(false);
    expect(backingOff.retryAfterMs).toBe(180);
    expect(events).toContain('Warning BackOff: Back-off restarting failed container web in pod web-1_default(uid-web-1)');
    const waiting = statusOf(backingOff);
    expect(waiting.phase).toBe('Running');
    expect(waiting.containerStatuses![0]).toMatchObject({
      restartCount: 1,
      ready: false,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 3, reason: 'Error' } },
    });

    clock.now = exited + 200;
    expect((await manager.sync(pod, sink)).containers[0]).toMatchObject({ restartCount: 2 });
    clock.now = (await exitOf(runtime, 2)) + 20;
    const longer = await manager.sync(pod, sink);
    expect(longer.containers[0]!.waiting?.message).toBe('back-off 400ms restarting failed container=web pod=web-1_default(uid-web-1)');
    expect(longer.retryAfterMs).toBe(380);
    // One dead instance is kept beside the latest, for lastState and `kubectl logs --previous`.
    expect((await runtime.listContainers()).map((c) => c.metadata.attempt).sort()).toEqual([1, 2]);
  });

  it('does not restart under restartPolicy Never, and keeps the last run as lastState after a restart', async () => {
    const { runtime, manager, sink } = await setUp();
    const pod = crasher();
    pod.spec.restartPolicy = 'Never';
    await manager.sync(pod, sink);
    await exitOf(runtime, 0);
    const observed = await manager.sync(pod, sink);
    const status = buildPodStatus(pod, observed, context);
    expect(status.phase).toBe('Failed');
    expect(status.containerStatuses![0]).toMatchObject({ restartCount: 0, state: { terminated: { exitCode: 3, reason: 'Error' } } });
    expect(status.containerStatuses![0]!.lastState).toBeUndefined();
    expect(await runtime.listContainers()).toHaveLength(1);
  });

  it("reports the runtime's reason (OOMKilled) and the exit code", () => {
    const pod = boundPod('web-1');
    const instance = {
      id: 'c1',
      podSandboxId: 's1',
      metadata: { name: 'web', attempt: 0 },
      state: 'CONTAINER_EXITED' as const,
      createdAt: 0,
      startedAt: 1000,
      finishedAt: 2000,
      exitCode: 137,
      reason: 'OOMKilled',
      image: { image: 'nginx:1.27' },
      imageRef: 'sha256:x',
    };
    const status = buildPodStatus(
      { ...pod, spec: { ...pod.spec, restartPolicy: 'Never' } },
      {
        sandboxReady: true,
        podIP: '10.0.0.1',
        initialized: true,
        initContainers: [],
        ephemeralContainers: [],
        containers: [{ name: 'web', status: instance, restartCount: 0 }],
        incomplete: false,
      },
      context,
    );
    expect(status.containerStatuses![0]!.state?.terminated).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
  });
});
