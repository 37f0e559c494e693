import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '@skiff/api';
import { ipamNetwork, simulatedRuntime, withMethods } from '../test-support/node-parts.js';
import { boundPod } from '../test-support/objects.js';
import { runtimeManager } from '../test-support/runtime-manager.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-hooks-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** The simulated runtime, recording the commands run in containers and the grace periods of stops. */
async function watchedRuntime() {
  const runtime = await simulatedRuntime(join(dataDir, 'node'));
  const calls: { execs: string[]; stops: number[] } = { execs: [], stops: [] };
  const watched = withMethods(runtime, {
    async execSync(containerId: string, cmd: string[], timeoutSeconds: number) {
      calls.execs.push(`${cmd.join(' ')} (${timeoutSeconds}s)`);
      return runtime.execSync!(containerId, cmd, timeoutSeconds);
    },
    async stopContainer(containerId: string, timeoutSeconds: number) {
      calls.stops.push(timeoutSeconds);
      return runtime.stopContainer(containerId, timeoutSeconds);
    },
  });
  return { runtime: watched, calls };
}

async function setUp() {
  const { runtime, calls } = await watchedRuntime();
  const network = await ipamNetwork(join(dataDir, 'ipam'));
  const { manager } = runtimeManager({ runtime, network, dataDir: join(dataDir, 'node') });
  const events: string[] = [];
  const sink = (type: string, reason: string, message: string) => void events.push(`${type} ${reason}: ${message}`);
  return { calls, manager, events, sink };
}

const withLifecycle = (lifecycle: Container['lifecycle'], annotations?: Record<string, string>): Pod => {
  const pod = boundPod('web-1', { terminationGracePeriodSeconds: 20, containers: [{ name: 'app', image: 'nginx:1.27', lifecycle }] });
  if (annotations) pod.metadata.annotations = annotations;
  return pod;
};

describe('lifecycle hooks', () => {
  it('runs postStart after the start, through ExecSync', async () => {
    const { calls, manager, events, sink } = await setUp();
    const observed = await manager.sync(withLifecycle({ postStart: { exec: { command: ['sh', '-c', 'echo hi'] } } }), sink);
    expect(observed.containers[0]!.status?.state).toBe('CONTAINER_RUNNING');
    expect(calls.execs).toEqual(['sh -c echo hi (20s)']);
    expect(events.at(-1)).toBe('Normal Started: Started container app');
  });

  it('kills the container when postStart fails: FailedPostStartHook, then the restart policy decides', async () => {
    const { calls, manager, events, sink } = await setUp();
    const pod = withLifecycle({ postStart: { exec: { command: ['false'] } } }, { 'skiff.io/simulate-exec-exit-code': '1' });
    const observed = await manager.sync(pod, sink);
    const message =
      'Exec lifecycle hook ([false]) for Container "app" in Pod "web-1_default(uid-web-1)" failed - error: command \'false\' exited with 1: , message: ""';
    expect(events).toContain(`Warning FailedPostStartHook: ${message}`);
    expect(events).toContain('Normal Killing: FailedPostStartHook');
    expect(observed.containers[0]).toMatchObject({ waiting: { reason: 'PostStartHookError', message }, status: { state: 'CONTAINER_EXITED' } });
    expect(observed.incomplete).toBe(true);
    expect(calls.stops).toEqual([20]);
  });

  it('runs preStop before stopping, within the grace period, and stops with what is left (2 s at least)', async () => {
    const { calls, manager, events, sink } = await setUp();
    const pod = withLifecycle({ preStop: { sleep: { seconds: 1 } } });
    await manager.sync(pod, sink);
    const began = Date.now();
    await manager.killPod('default', 'web-1', 20, sink, pod);
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    expect(calls.stops).toEqual([19]);
    expect(events).toContain('Normal Killing: Stopping container app');

    const failing = withLifecycle({ preStop: { exec: { command: ['drain'] } } }, { 'skiff.io/simulate-exec-exit-code': '2' });
    await manager.sync(failing, sink);
    await manager.killPod('default', 'web-1', 3, sink, failing);
    expect(events.filter((e) => e.startsWith('Warning FailedPreStopHook'))).toEqual([
      'Warning FailedPreStopHook: Exec lifecycle hook ([drain]) for Container "app" in Pod "web-1_default(uid-web-1)" failed - error: command \'drain\' exited with 2: , message: ""',
    ]);
    expect(calls.execs.at(-1)).toBe('drain (3s)');
  });

  it('skips preStop when there is no grace period', async () => {
    const { calls, manager, sink } = await setUp();
    const pod = withLifecycle({ preStop: { exec: { command: ['drain'] } } });
    await manager.sync(pod, sink);
    await manager.killPod('default', 'web-1', 0, sink, pod);
    expect(calls.execs).toEqual([]);
    expect(calls.stops).toEqual([0]);
  });
});
