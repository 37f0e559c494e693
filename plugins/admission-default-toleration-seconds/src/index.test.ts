import { describe, expect, it } from 'vitest';
import { Kernel } from '@skiff/kernel';
import type { Pod, Toleration } from '@skiff/api';
import { admissionRequest, admit } from '@skiff/testing';
import plugin, { NOT_READY_TAINT, UNREACHABLE_TAINT } from './index.js';

const kernelWith = (options: object = {}) => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);

const pod = (tolerations?: Toleration[]): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...(tolerations && { tolerations }) },
  }) as Pod;

const notReady = (seconds = 300): Toleration => ({ key: NOT_READY_TAINT, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
const unreachable = (seconds = 300): Toleration => ({ key: UNREACHABLE_TAINT, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });

async function tolerationsOf(kernel: Kernel, object: Pod, overrides: Parameters<typeof admissionRequest>[0] = {}): Promise<Toleration[] | undefined> {
  const admitted = (await admit(kernel, admissionRequest({ object, ...overrides }))) as Pod;
  return admitted.spec.tolerations;
}

describe('DefaultTolerationSeconds admission', () => {
  const kernel = kernelWith();

  it('adds the not-ready and unreachable NoExecute tolerations for 300 seconds, after the pod’s own', async () => {
    expect(await tolerationsOf(kernel, pod())).toEqual([notReady(), unreachable()]);
    const own: Toleration = { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' };
    expect(await tolerationsOf(kernel, pod([own]))).toEqual([own, notReady(), unreachable()]);
  });

  it('leaves a taint the pod already tolerates alone: its own key, an empty effect, or an empty key', async () => {
    expect(await tolerationsOf(kernel, pod([notReady(60)]))).toEqual([notReady(60), unreachable()]);
    const anyEffect: Toleration = { key: UNREACHABLE_TAINT, operator: 'Exists' };
    expect(await tolerationsOf(kernel, pod([anyEffect]))).toEqual([anyEffect, notReady()]);
    const everything: Toleration = { operator: 'Exists' };
    expect(await tolerationsOf(kernel, pod([everything]))).toEqual([everything]);
    const everyNoExecute: Toleration = { operator: 'Exists', effect: 'NoExecute' };
    expect(await tolerationsOf(kernel, pod([everyNoExecute]))).toEqual([everyNoExecute]);
  });

  it('adds them when the pod tolerates the taint with another effect only', async () => {
    const noSchedule: Toleration = { key: NOT_READY_TAINT, operator: 'Exists', effect: 'NoSchedule' };
    expect(await tolerationsOf(kernel, pod([noSchedule]))).toEqual([noSchedule, notReady(), unreachable()]);
  });

  it('puts them back on an update that leaves them out, and touches no other resource or subresource', async () => {
    expect(await tolerationsOf(kernel, pod(), { operation: 'UPDATE', oldObject: pod([notReady(), unreachable()]) })).toEqual([notReady(), unreachable()]);
    expect(await tolerationsOf(kernel, pod(), { subresource: 'status', operation: 'UPDATE' })).toBeUndefined();
    const other = await admit(kernel, admissionRequest({ object: pod(), resource: { group: 'example.com', version: 'v1', resource: 'pods' } }));
    expect((other as Pod).spec.tolerations).toBeUndefined();
  });

  it('takes the seconds from its options', async () => {
    const short = kernelWith({ notReadyTolerationSeconds: 30, unreachableTolerationSeconds: 0 });
    expect(await tolerationsOf(short, pod())).toEqual([notReady(30), unreachable(0)]);
  });

  it('refuses a negative or fractional number of seconds at start', () => {
    expect(() => kernelWith({ notReadyTolerationSeconds: -1 })).toThrow(/notReadyTolerationSeconds/);
    expect(() => kernelWith({ unreachableTolerationSeconds: 1.5 })).toThrow(/unreachableTolerationSeconds/);
  });
});
