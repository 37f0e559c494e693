import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '@skiff/api';
import { boundPod } from '../test-support/objects.js';
import { containerResources, containerSecurityContext, milliCpuToShares, namespaceOptions, oomScoreAdjust, sandboxLinux } from './linux-config.js';

const GiB = 1024 ** 3;
const podWith = (resources: Container['resources'], spec: Partial<Pod['spec']> = {}) =>
  boundPod('web-1', { containers: [{ name: 'app', image: 'nginx', resources }], ...spec });

describe('container resources', () => {
  it('turns the CPU request into shares (1024 a core, 2 at least) and the limit into a CFS quota over 100 ms', () => {
    expect(milliCpuToShares(0)).toBe(2);
    expect(milliCpuToShares(1)).toBe(2);
    expect(milliCpuToShares(250)).toBe(256);
    expect(milliCpuToShares(1000)).toBe(1024);
    expect(milliCpuToShares(1_000_000)).toBe(262_144);
    const pod = podWith({ requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } });
    expect(containerResources(pod, pod.spec.containers[0]!, 8 * GiB)).toEqual({
      cpuShares: 256,
      cpuPeriod: 100_000,
      cpuQuota: 50_000,
      memoryLimitInBytes: 128 * 1024 * 1024,
      oomScoreAdj: 1000 - Math.trunc((1000 * 64 * 1024 * 1024) / (8 * GiB)),
    });
  });

  it('takes the CPU request from the limit when only that is set, and gives a tiny limit the smallest quota', () => {
    const pod = podWith({ limits: { cpu: '5m', memory: '1Gi' } });
    expect(containerResources(pod, pod.spec.containers[0]!, 8 * GiB)).toMatchObject({ cpuShares: 5, cpuQuota: 1000, cpuPeriod: 100_000 });
    const none = podWith(undefined);
    expect(containerResources(none, none.spec.containers[0]!, 8 * GiB)).toEqual({ cpuShares: 2, oomScoreAdj: 1000 });
  });

  it('adjusts OOM scores by QoS class: Guaranteed -997, BestEffort 1000, Burstable between 3 and 999', () => {
    const guaranteed = podWith({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });
    expect(oomScoreAdjust(guaranteed, guaranteed.spec.containers[0]!, 8 * GiB)).toBe(-997);
    const bestEffort = podWith(undefined);
    expect(oomScoreAdjust(bestEffort, bestEffort.spec.containers[0]!, 8 * GiB)).toBe(1000);
    const burstable = (memory: string) => {
      const pod = podWith({ requests: { cpu: '100m', memory } });
      return oomScoreAdjust(pod, pod.spec.containers[0]!, 8 * GiB);
    };
    expect(burstable('2Gi')).toBe(750);
    expect(burstable('8Gi')).toBe(3);
    expect(burstable('16Gi')).toBe(3);
    expect(burstable('1')).toBe(999);
    const noMemory = podWith({ requests: { cpu: '100m' } });
    expect(oomScoreAdjust(noMemory, noMemory.spec.containers[0]!, 8 * GiB)).toBe(999);
    const critical = podWith({ requests: { cpu: '100m' } }, { priorityClassName: 'system-node-critical' });
    expect(oomScoreAdjust(critical, critical.spec.containers[0]!, 8 * GiB)).toBe(-997);
  });
});

describe('namespaces and security', () => {
  it('gives each container its own PID namespace unless the pod shares one or uses the host', () => {
    expect(namespaceOptions(boundPod('a'))).toEqual({ network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
    expect(namespaceOptions(boundPod('a', { shareProcessNamespace: true }))).toEqual({ network: 'POD', pid: 'POD', ipc: 'POD' });
    expect(namespaceOptions(boundPod('a', { hostNetwork: true, hostPID: true, hostIPC: true }))).toEqual({ network: 'NODE', pid: 'NODE', ipc: 'NODE' });
  });

  it('sets no_new_privs only where allowPrivilegeEscalation is false', () => {
    const pod = boundPod('a', {
      containers: [
        { name: 'locked', image: 'nginx', securityContext: { allowPrivilegeEscalation: false } },
        { name: 'allowed', image: 'nginx', securityContext: { allowPrivilegeEscalation: true } },
        { name: 'unset', image: 'nginx' },
      ],
    });
    expect(pod.spec.containers.map((container) => containerSecurityContext(pod, container).noNewPrivs)).toEqual([true, undefined, undefined]);
  });

  it("takes user and group from the container's securityContext over the pod's, the rest from the container's; every container carries the pod's groups and fsGroup", () => {
    const pod = boundPod('a', {
      securityContext: {
        runAsUser: 1000,
        runAsGroup: 3000,
        supplementalGroups: [4000],
        fsGroup: 2000,
        sysctls: [{ name: 'net.core.somaxconn', value: '1024' }],
      },
      containers: [
        {
          name: 'app',
          image: 'nginx',
          securityContext: { runAsUser: 1001, privileged: true, readOnlyRootFilesystem: true, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] } },
        },
        { name: 'plain', image: 'nginx' },
      ],
    });
    expect(containerSecurityContext(pod, pod.spec.containers[0]!)).toEqual({
      namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
      privileged: true,
      runAsUser: 1001,
      runAsGroup: 3000,
      supplementalGroups: [4000, 2000],
      readonlyRootfs: true,
      capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] },
    });
    expect(containerSecurityContext(pod, pod.spec.containers[1]!)).toEqual({
      namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
      runAsUser: 1000,
      runAsGroup: 3000,
      supplementalGroups: [4000, 2000],
    });
    expect(sandboxLinux(pod)).toEqual({
      sysctls: { 'net.core.somaxconn': '1024' },
      securityContext: {
        namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
        privileged: true,
        runAsUser: 1000,
        supplementalGroups: [4000, 2000],
      },
    });
  });
});
