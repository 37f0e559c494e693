import { describe, expect, it } from 'vitest';
import type { ContainerStatusInfo } from '@skiff/kernel';
import { boundPod } from '../test-support/objects.js';
import type { PodObservation } from './pod-runtime.js';
import { buildPodStatus, rejectedPodStatus, sameStatus, type StatusContext } from './pod-status.js';
import { qosClass } from './qos.js';

const context: StatusContext = { hostIP: '127.0.0.1', runtimeName: 'simulated', now: '2026-01-01T00:00:10Z' };

const instance = (state: ContainerStatusInfo['state'], extra: Partial<ContainerStatusInfo> = {}): ContainerStatusInfo => ({
  id: 'abc123',
  podSandboxId: 'sandbox',
  metadata: { name: 'web', attempt: 0 },
  state,
  createdAt: Date.parse('2026-01-01T00:00:05Z'),
  startedAt: Date.parse('2026-01-01T00:00:06Z'),
  image: { image: 'nginx:1.27' },
  imageRef: 'docker.io/library/nginx@sha256:1234',
  ...extra,
});

const running = (): PodObservation => ({
  sandboxReady: true,
  podIP: '10.244.1.2',
  initialized: true,
  initContainers: [],
  ephemeralContainers: [],
  containers: [{ name: 'web', status: instance('CONTAINER_RUNNING'), restartCount: 0 }],
  incomplete: false,
});

describe('buildPodStatus', () => {
  it('describes a running pod the way kubectl expects', () => {
    const status = buildPodStatus(boundPod('web-1'), running(), context);
    expect(status).toMatchObject({
      phase: 'Running',
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      podIP: '10.244.1.2',
      podIPs: [{ ip: '10.244.1.2' }],
      startTime: '2026-01-01T00:00:10Z',
      qosClass: 'BestEffort',
      containerStatuses: [
        {
          name: 'web',
          image: 'nginx:1.27',
          imageID: 'docker.io/library/nginx@sha256:1234',
          containerID: 'simulated://abc123',
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: '2026-01-01T00:00:06Z' } },
        },
      ],
    });
    expect(status.conditions!.map((c) => [c.type, c.status])).toEqual([
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'True'],
      ['ContainersReady', 'True'],
      ['PodScheduled', 'True'],
    ]);
    expect(status.conditions!.every((c) => c.lastTransitionTime === '2026-01-01T00:00:10Z')).toBe(true);
  });

  it('keeps transition times and start time of conditions that did not change', () => {
    const pod = boundPod('web-1');
    pod.status = buildPodStatus(pod, running(), { ...context, now: '2026-01-01T00:00:00Z' });
    const again = buildPodStatus(pod, running(), context);
    expect(again.startTime).toBe('2026-01-01T00:00:00Z');
    expect(again.conditions!.every((c) => c.lastTransitionTime === '2026-01-01T00:00:00Z')).toBe(true);
    expect(sameStatus(pod.status, again)).toBe(true);
  });

  it('shows a container that cannot pull as waiting, the pod Pending and not ready', () => {
    const observed: PodObservation = {
      ...running(),
      containers: [{ name: 'web', restartCount: 0, waiting: { reason: 'ErrImagePull', message: 'not found' } }],
      incomplete: true,
    };
    const status = buildPodStatus(boundPod('web-1'), observed, context);
    expect(status.phase).toBe('Pending');
    expect(status.containerStatuses![0]).toMatchObject({
      ready: false,
      started: false,
      imageID: '',
      state: { waiting: { reason: 'ErrImagePull', message: 'not found' } },
    });
    expect(status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [web]',
    });
  });

  it('reports finished pods as Succeeded or Failed by restart policy and exit codes', () => {
    const exited = (exitCode: number): PodObservation => ({
      ...running(),
      containers: [{ name: 'web', restartCount: 0, status: instance('CONTAINER_EXITED', { exitCode, finishedAt: Date.parse('2026-01-01T00:00:09Z') }) }],
    });
    const job = boundPod('job-1', { restartPolicy: 'Never' });
    expect(buildPodStatus(job, exited(0), context).phase).toBe('Succeeded');
    const failed = buildPodStatus(job, exited(1), context);
    expect(failed.phase).toBe('Failed');
    expect(failed.containerStatuses![0]!.state?.terminated).toMatchObject({
      exitCode: 1,
      reason: 'Error',
      finishedAt: '2026-01-01T00:00:09Z',
      containerID: 'simulated://abc123',
    });
    expect(failed.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    expect(buildPodStatus(boundPod('web-1'), exited(0), context).phase).toBe('Running');
  });

  it('is Pending with Initialized False while init containers run', () => {
    const pod = boundPod('web-1', { initContainers: [{ name: 'migrate', image: 'busybox' }] });
    const observed: PodObservation = {
      ...running(),
      initialized: false,
      initContainers: [{ name: 'migrate', restartCount: 0, status: instance('CONTAINER_RUNNING', { metadata: { name: 'migrate', attempt: 0 } }) }],
      containers: [{ name: 'web', restartCount: 0, waiting: { reason: 'PodInitializing' } }],
    };
    const status = buildPodStatus(pod, observed, context);
    expect(status.phase).toBe('Pending');
    expect(status.initContainerStatuses![0]).toMatchObject({ name: 'migrate', ready: false, started: true });
    expect(status.conditions!.find((c) => c.type === 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [migrate]',
    });
  });

  it('marks a pod turned away by admission as Failed with the reason', () => {
    expect(rejectedPodStatus(boundPod('web-1'), { reason: 'OutOfcpu', message: 'Pod was rejected: no cpu' }, context)).toMatchObject({
      phase: 'Failed',
      reason: 'OutOfcpu',
      message: 'Pod was rejected: no cpu',
    });
  });
});

describe('qosClass', () => {
  it('tells Guaranteed, Burstable and BestEffort apart', () => {
    const withResources = (resources: object) => boundPod('p', { containers: [{ name: 'c', image: 'x', resources }] });
    expect(qosClass(boundPod('p'))).toBe('BestEffort');
    expect(qosClass(withResources({ limits: { cpu: '1', memory: '1Gi' } }))).toBe('Guaranteed');
    expect(qosClass(withResources({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }))).toBe('Guaranteed');
    expect(qosClass(withResources({ requests: { cpu: '500m' } }))).toBe('Burstable');
    expect(qosClass(withResources({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }))).toBe('Burstable');
  });
});

describe('sameStatus', () => {
  it('ignores key order and null versus absent', () => {
    expect(sameStatus({ a: 1, b: { c: null } }, { b: {}, a: 1 })).toBe(true);
    expect(sameStatus({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  });
});
