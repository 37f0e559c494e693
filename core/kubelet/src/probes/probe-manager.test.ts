import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '@skiff/api';
import type { ContainerStatusInfo } from '@skiff/kernel';
import { boundPod, silentLogger } from '../test-support/objects.js';
import type { PodObservation } from '../pods/pod-runtime.js';
import type { ActionRunner, Handler } from './actions.js';
import { ProbeManager, type Probe } from './probe-manager.js';

/** A probe "second" in these tests. */
const SECOND = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers each probe by its exec command's first word: `ok` succeeds, anything else fails; the test flips them. */
class ScriptedRunner {
  verdicts = new Map<string, boolean>();
  calls: string[] = [];
  async run(handler: Handler) {
    const name = handler.exec!.command![0]!;
    this.calls.push(name);
    return this.verdicts.get(name) ? { outcome: 'success' as const, output: '' } : { outcome: 'failure' as const, output: `${name} said no` };
  }
}

const probe = (name: string, extra: Partial<Probe> = {}): Probe => ({ exec: { command: [name] }, periodSeconds: 1, failureThreshold: 1, ...extra });

function instance(id: string, state: ContainerStatusInfo['state'] = 'CONTAINER_RUNNING'): ContainerStatusInfo {
  const now = Date.now();
  return { id, podSandboxId: 's', metadata: { name: 'app', attempt: 0 }, state, createdAt: now, startedAt: now, image: { image: 'x' }, imageRef: 'x' };
}

function observed(status: ContainerStatusInfo | undefined): PodObservation {
  return {
    sandboxReady: true,
    podIP: '10.0.0.1',
    initialized: true,
    initContainers: [],
    containers: [{ name: 'app', restartCount: 0, ...(status ? { status } : {}) }],
    incomplete: false,
  };
}

let manager: ProbeManager | undefined;
afterEach(() => manager?.stop());

function setUp(container: Partial<Container>) {
  const runner = new ScriptedRunner();
  const changes: string[] = [];
  const kills: string[] = [];
  const events: string[] = [];
  manager = new ProbeManager({
    runner: runner as unknown as ActionRunner,
    onChange: (pod) => changes.push(pod.metadata.name!),
    kill: async (_pod, spec, id, grace, message) => void kills.push(`${spec.name} ${id} ${grace}: ${message}`),
    events: () => (type, reason, message) => events.push(`${type} ${reason}: ${message}`),
    logger: silentLogger,
    secondMs: SECOND,
  });
  const pod: Pod = boundPod('web-1', { containers: [{ name: 'app', image: 'nginx', ...container }] });
  return { runner, changes, kills, events, pod, manager, status: (id?: string) => manager!.status('uid-web-1', pod.spec.containers[0]!, id) };
}

describe('probe manager', () => {
  it('keeps a container unready until its readiness probe succeeds, and says when that changes', async () => {
    const { runner, changes, events, pod, manager, status } = setUp({ readinessProbe: probe('ready', { initialDelaySeconds: 2 }) });
    manager.update(pod, observed(instance('c1')));
    expect(status('c1')).toEqual({ ready: false });
    await sleep(SECOND);
    expect(runner.calls).toEqual([]);
    await sleep(2 * SECOND);
    expect(runner.calls.length).toBeGreaterThan(0);
    expect(events[0]).toBe('Warning Unhealthy: Readiness probe failed: ready said no');
    runner.verdicts.set('ready', true);
    await sleep(3 * SECOND);
    expect(status('c1')).toEqual({ ready: true });
    expect(changes).toContain('web-1');
    manager.update(pod, observed(instance('c1', 'CONTAINER_EXITED')));
    expect(status('c1')).toEqual({ ready: false });
  });

  it('kills a container whose liveness probe fails failureThreshold times in a row, once, and follows the next instance', async () => {
    const { runner, kills, events, pod, manager } = setUp({ livenessProbe: probe('alive', { failureThreshold: 2 }) });
    pod.spec.terminationGracePeriodSeconds = 7;
    runner.verdicts.set('alive', true);
    manager.update(pod, observed(instance('c1')));
    await sleep(3 * SECOND);
    expect(kills).toEqual([]);
    runner.verdicts.set('alive', false);
    await sleep(6 * SECOND);
    expect(kills).toEqual(['app c1 7: Container app failed liveness probe, will be restarted']);
    expect(events.filter((e) => e.startsWith('Warning Unhealthy'))).toEqual([
      'Warning Unhealthy: Liveness probe failed: alive said no',
      'Warning Unhealthy: Liveness probe failed: alive said no',
    ]);
    const calls = runner.calls.length;
    await sleep(3 * SECOND);
    expect(runner.calls.length).toBe(calls);
    runner.verdicts.set('alive', true);
    manager.update(pod, observed(instance('c2')));
    await sleep(3 * SECOND);
    expect(runner.calls.length).toBeGreaterThan(calls);
  });

  it('holds liveness and readiness back until the startup probe succeeds, then stops probing startup', async () => {
    const { runner, pod, manager, status } = setUp({
      startupProbe: probe('started', { failureThreshold: 30 }),
      livenessProbe: probe('alive'),
      readinessProbe: probe('ready'),
    });
    runner.verdicts.set('alive', true).set('ready', true);
    manager.update(pod, observed(instance('c1')));
    await sleep(3 * SECOND);
    expect(new Set(runner.calls)).toEqual(new Set(['started']));
    expect(status('c1')).toEqual({ started: false, ready: false });
    runner.verdicts.set('started', true);
    await sleep(4 * SECOND);
    expect(status('c1')).toEqual({ started: true, ready: true });
    const startups = runner.calls.filter((call) => call === 'started').length;
    await sleep(3 * SECOND);
    expect(runner.calls.filter((call) => call === 'started').length).toBe(startups);
  });

  it('kills a container that never passes its startup probe', async () => {
    const { kills, pod, manager } = setUp({ startupProbe: probe('started', { failureThreshold: 2, terminationGracePeriodSeconds: 3 }) });
    manager.update(pod, observed(instance('c1')));
    await sleep(5 * SECOND);
    expect(kills).toEqual(['app c1 3: Container app failed startup probe, will be restarted']);
  });

  it('stops probing a pod that is gone', async () => {
    const { runner, pod, manager } = setUp({ readinessProbe: probe('ready') });
    manager.update(pod, observed(instance('c1')));
    await sleep(2 * SECOND);
    manager.removePod('uid-web-1');
    const calls = runner.calls.length;
    await sleep(3 * SECOND);
    expect(runner.calls.length).toBe(calls);
  });
});
