import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Container, Pod, Probe } from '@skiff/api';
import type { ContainerStatusInfo } from '@skiff/kernel';
import { boundPod, silentLogger } from '../test-support/objects.js';
import type { PodObservation } from '../pods/pod-runtime.js';
import type { ActionRunner, Handler } from './actions.js';
import { ProbeManager } from './probe-manager.js';

/** A probe "second" in these tests: a real one, on fake timers, so the counts below are exact on any machine. */
const SECOND = 1000;
const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms);

/** Answers each probe by its exec command's first word: `ok` succeeds, anything else fails; the test flips them. */
class ScriptedRunner {
  verdicts = new Map<string, boolean>();
  calls: string[] = [];
  /** Set: the next run waits for the test to answer it (a probe in flight). */
  hold: ((answer: () => void) => void) | undefined;
  /** Set: runs throw this (the runtime failed). */
  error: Error | undefined;
  async run(handler: Handler) {
    const name = handler.exec!.command![0]!;
    this.calls.push(name);
    const hold = this.hold;
    this.hold = undefined;
    if (hold) await new Promise<void>((answer) => hold(answer));
    if (this.error) throw this.error;
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
    ephemeralContainers: [],
    containers: [{ name: 'app', restartCount: 0, ...(status ? { status } : {}) }],
    incomplete: false,
  };
}

let manager: ProbeManager | undefined;
beforeEach(() => void vi.useFakeTimers());
afterEach(() => {
  manager?.stop();
  vi.useRealTimers();
});

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
  it('drops a run that was in flight when its container exited: no verdict, no events, no next run', async () => {
    const { runner, events, changes, pod, manager, status } = setUp({ readinessProbe: probe('ready') });
    runner.verdicts.set('ready', true);
    let answer: (() => void) | undefined;
    runner.hold = (resolve) => (answer = resolve);
    manager.update(pod, observed(instance('c1')));
    await sleep(0);
    expect(runner.calls).toEqual(['ready']);
    manager.update(pod, observed(instance('c1', 'CONTAINER_EXITED')));
    answer!();
    await sleep(5 * SECOND);
    expect(runner.calls).toEqual(['ready']);
    expect(status('c1')).toEqual({ ready: false });
    expect(changes).toEqual([]);
    expect(events).toEqual([]);
  });

  it('does not keep erroring, or kill, against a container that exited mid-run', async () => {
    const { runner, events, kills, pod, manager } = setUp({ livenessProbe: probe('alive') });
    let answer: (() => void) | undefined;
    runner.hold = (resolve) => (answer = resolve);
    manager.update(pod, observed(instance('c1')));
    await sleep(0);
    manager.update(pod, observed(instance('c1', 'CONTAINER_EXITED')));
    answer!();
    await sleep(5 * SECOND);
    expect(runner.calls).toEqual(['alive']);
    expect(kills).toEqual([]);
    expect(events).toEqual([]);
    runner.error = new Error('container not running');
    runner.hold = (resolve) => (answer = resolve);
    manager.update(pod, observed(instance('c2')));
    await sleep(0);
    manager.update(pod, observed(instance('c2', 'CONTAINER_EXITED')));
    answer!();
    await sleep(5 * SECOND);
    expect(runner.calls).toEqual(['alive', 'alive']);
    expect(events).toEqual([]);
  });

  it('follows the next instance when a run for the previous one was still in flight', async () => {
    const { runner, pod, manager, status } = setUp({ readinessProbe: probe('ready') });
    runner.verdicts.set('ready', true);
    let answer: (() => void) | undefined;
    runner.hold = (resolve) => (answer = resolve);
    manager.update(pod, observed(instance('c1')));
    await sleep(0);
    manager.update(pod, observed(instance('c2')));
    answer!();
    await sleep(0);
    expect(status('c1')).toEqual({ ready: false });
    await sleep(SECOND);
    expect(status('c2')).toEqual({ ready: true });
    const calls = runner.calls.length;
    await sleep(3 * SECOND);
    expect(runner.calls.length).toBe(calls + 3);
  });

  it('starts no probes once stopped, even for syncs that were still in flight', async () => {
    const { runner, pod, manager, status } = setUp({ readinessProbe: probe('ready') });
    runner.verdicts.set('ready', true);
    manager.stop();
    manager.update(pod, observed(instance('c1')));
    await sleep(5 * SECOND);
    expect(runner.calls).toEqual([]);
    expect(status('c1')).toEqual({ ready: false });
  });
});
