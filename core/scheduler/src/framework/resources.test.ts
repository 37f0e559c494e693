import { describe, expect, it } from 'vitest';
import { makeContainer, makePod } from '../test-support/objects.js';
import { amountsFromResourceList, DEFAULT_MEMORY_REQUEST, podRequests } from './resources.js';

const Mi = 1024 * 1024;

describe('podRequests', () => {
  it('sums the containers and counts one pod', () => {
    const pod = makePod('p', { cpu: '250m', memory: '64Mi' });
    pod.spec.containers.push(makeContainer('side', { cpu: '0.5', memory: '32Mi' }));
    expect(podRequests(pod)).toEqual({ milliCPU: 750, memory: 96 * Mi, pods: 1 });
  });

  it('counts a pod without requests as zero cpu and memory, but one pod', () => {
    expect(podRequests(makePod('p'))).toEqual({ milliCPU: 0, memory: 0, pods: 1 });
  });

  it('applies the init-container max rule: max(max(init), sum(containers))', () => {
    const pod = makePod('p', { cpu: '200m', memory: '100Mi' });
    pod.spec.containers.push(makeContainer('b', { cpu: '200m', memory: '100Mi' }));
    pod.spec.initContainers = [makeContainer('init-1', { cpu: '1', memory: '50Mi' }), makeContainer('init-2', { cpu: '300m', memory: '500Mi' })];
    // cpu: max(1000, 400) = 1000; memory: max(500Mi, 200Mi) = 500Mi
    expect(podRequests(pod)).toEqual({ milliCPU: 1000, memory: 500 * Mi, pods: 1 });
  });

  it('keeps sidecars (restartPolicy Always init containers) running alongside', () => {
    const pod = makePod('p', { cpu: '100m' });
    pod.spec.initContainers = [makeContainer('sidecar', { cpu: '200m' }, { restartPolicy: 'Always' }), makeContainer('setup', { cpu: '500m' })];
    // steady state: 100m + 200m; while setup runs: 500m + the sidecar's 200m
    expect(podRequests(pod).milliCPU).toBe(700);
  });

  it('takes limits for unset requests and adds spec.overhead', () => {
    const pod = makePod('p');
    pod.spec.containers[0]!.resources = { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } };
    pod.spec.overhead = { cpu: '50m' };
    expect(podRequests(pod)).toEqual({ milliCPU: 550, memory: 1024 * Mi, pods: 1 });
  });

  it('uses 100m / 200Mi for missing requests when scoring, but keeps explicit zeros', () => {
    expect(podRequests(makePod('p'), { nonZeroDefaults: true })).toEqual({ milliCPU: 100, memory: DEFAULT_MEMORY_REQUEST, pods: 1 });
    expect(podRequests(makePod('p', { cpu: '0' }), { nonZeroDefaults: true })).toEqual({ milliCPU: 0, memory: 200 * Mi, pods: 1 });
  });

  it('carries extended resources as scalars', () => {
    expect(podRequests(makePod('p', { 'example.com/gpu': 2 })).scalar).toEqual({ 'example.com/gpu': 2 });
    expect(amountsFromResourceList({ cpu: '4', memory: '8Gi', pods: 110, 'hugepages-2Mi': '1Gi' })).toEqual({
      milliCPU: 4000,
      memory: 8192 * Mi,
      pods: 110,
      scalar: { 'hugepages-2Mi': 1024 * Mi },
    });
  });
});
