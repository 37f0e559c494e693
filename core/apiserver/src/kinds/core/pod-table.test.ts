import type { ContainerStatus, KubeObject, Pod } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { podCells, POD_COLUMNS } from './pod-table.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

function pod(status: Record<string, unknown>, spec: Partial<Pod['spec']> = {}, metadata: Partial<KubeObject['metadata']> = {}): Pod {
  return {
    metadata: { name: 'web-1', namespace: 'default', creationTimestamp: ago(125), ...metadata },
    spec: { containers: [{ name: 'web', image: 'nginx' }], ...spec },
    status,
  } as Pod;
}

const running = (name: string, extra: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name,
  image: 'nginx',
  imageID: '',
  ready: true,
  restartCount: 0,
  state: { running: { startedAt: ago(100) } },
  ...extra,
});

describe('pod table row', () => {
  it('prints a running pod like kubectl, with the wide columns', () => {
    const cells = podCells(
      pod({ phase: 'Running', podIP: '10.0.0.5', podIPs: [{ ip: '10.0.0.5' }], containerStatuses: [running('web')] }, { nodeName: 'node-1' }),
      NOW,
    );
    expect(cells).toEqual(['web-1', '1/1', 'Running', '0', '2m5s', '10.0.0.5', 'node-1', '<none>', '<none>']);
    expect(cells).toHaveLength(POD_COLUMNS.length);
  });

  it('prints a freshly created pod as Pending with <none> placeholders', () => {
    expect(podCells(pod({ phase: 'Pending' }), NOW)).toEqual(['web-1', '0/1', 'Pending', '0', '2m5s', '<none>', '<none>', '<none>', '<none>']);
  });

  it('shows the waiting reason of a container', () => {
    const status = { phase: 'Pending', containerStatuses: [{ ...running('web'), ready: false, state: { waiting: { reason: 'ContainerCreating' } } }] };
    expect(podCells(pod(status), NOW).slice(1, 3)).toEqual(['0/1', 'ContainerCreating']);
  });

  it('shows restarts with how long ago the last one was', () => {
    const status = {
      phase: 'Running',
      containerStatuses: [running('web', { restartCount: 3, lastState: { terminated: { exitCode: 1, finishedAt: ago(300) } } })],
    };
    expect(podCells(pod(status), NOW)[3]).toBe('3 (5m ago)');
  });

  it('shows init container progress and failures', () => {
    const spec = {
      initContainers: [
        { name: 'a', image: 'x' },
        { name: 'b', image: 'x' },
      ],
    };
    const done = { ...running('a'), state: { terminated: { exitCode: 0, reason: 'Completed' } } };
    const waiting = { ...running('b'), ready: false, state: { running: { startedAt: ago(1) } } };
    expect(podCells(pod({ phase: 'Pending', initContainerStatuses: [done, waiting] }, spec), NOW)[2]).toBe('Init:1/2');
    const crashing = { ...running('b'), ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } } };
    expect(podCells(pod({ phase: 'Pending', initContainerStatuses: [done, crashing] }, spec), NOW)[2]).toBe('Init:CrashLoopBackOff');
    const failed = { ...running('a'), state: { terminated: { exitCode: 2 } } };
    expect(podCells(pod({ phase: 'Pending', initContainerStatuses: [failed] }, spec), NOW)[2]).toBe('Init:ExitCode:2');
  });

  it('counts sidecar init containers in READY', () => {
    const spec = { initContainers: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always' }] };
    const sidecar = { ...running('proxy'), started: true };
    const status = {
      phase: 'Running',
      initContainerStatuses: [sidecar],
      containerStatuses: [running('web')],
      conditions: [{ type: 'Initialized', status: 'True' }],
    };
    expect(podCells(pod(status, spec), NOW).slice(1, 3)).toEqual(['2/2', 'Running']);
  });

  it('shows Completed, and Terminating for a pod being deleted', () => {
    const completed = {
      phase: 'Succeeded',
      containerStatuses: [{ ...running('web'), ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
    };
    expect(podCells(pod(completed), NOW)[2]).toBe('Completed');
    const deleting = pod({ phase: 'Running', containerStatuses: [running('web')] }, {}, { deletionTimestamp: ago(0) });
    expect(podCells(deleting, NOW)[2]).toBe('Terminating');
    expect(podCells(pod(completed, {}, { deletionTimestamp: ago(0) }), NOW)[2]).toBe('Completed');
  });

  it('shows readiness gates as satisfied/total', () => {
    const spec = { readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] };
    const status = { phase: 'Running', conditions: [{ type: 'example.com/lb', status: 'True' }] };
    expect(podCells(pod(status, spec), NOW)[8]).toBe('1/2');
  });

  it('declares kubectl’s columns, the wide ones with priority 1', () => {
    expect(POD_COLUMNS.map((c) => [c.name, c.priority])).toEqual([
      ['Name', 0],
      ['Ready', 0],
      ['Status', 0],
      ['Restarts', 0],
      ['Age', 0],
      ['IP', 1],
      ['Node', 1],
      ['Nominated Node', 1],
      ['Readiness Gates', 1],
    ]);
    expect(POD_COLUMNS[0]).toMatchObject({ format: 'name', type: 'string' });
    expect(POD_COLUMNS.every((c) => c.description === undefined)).toBe(true);
  });
});
