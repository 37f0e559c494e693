import { describe, expect, it } from 'vitest';
import type { Pod } from '@skiff/api';
import { goDuration, podMetrics, usageQuantities } from './objects.js';

describe('goDuration', () => {
  it("writes a window as Go's time.Duration does", () => {
    expect(goDuration(15)).toBe('15s');
    expect(goDuration(10.0074)).toBe('10.007s');
    expect(goDuration(0.5)).toBe('500ms');
    expect(goDuration(60.25)).toBe('1m0.25s');
    expect(goDuration(3725)).toBe('1h2m5s');
    expect(goDuration(0)).toBe('0s');
  });
});

describe('usageQuantities', () => {
  it('canonical CPU from nanocores and BinarySI memory from bytes', () => {
    expect(usageQuantities({ cpuNanoCores: 250_000_000, memoryWorkingSetBytes: 64 * 1024 * 1024 })).toEqual({ cpu: '250m', memory: '64Mi' });
    expect(usageQuantities({ cpuNanoCores: 123_456_789, memoryWorkingSetBytes: 12_345 * 1024 })).toEqual({ cpu: '123456789n', memory: '12345Ki' });
    // Under 1024 bytes Kubernetes writes BinarySI as DecimalSI.
    expect(usageQuantities({ cpuNanoCores: 0, memoryWorkingSetBytes: 1000 })).toEqual({ cpu: '0', memory: '1k' });
  });
});

describe('podMetrics', () => {
  const pod = {
    metadata: { name: 'web', namespace: 'default', uid: 'u', labels: { app: 'web' } },
    spec: { containers: [{ name: 'a' }, { name: 'b' }] },
  } as Pod;
  const figures = (name: string, timestamp: string, windowSeconds: number) => ({
    name,
    timestamp,
    windowSeconds,
    cpuNanoCores: 1e6,
    memoryWorkingSetBytes: 1024,
  });

  it("is left out until every container of the pod's spec has figures", () => {
    expect(podMetrics(pod, { namespace: 'default', name: 'web', uid: 'u', containers: [figures('a', '2026-01-01T00:00:10Z', 10)] }, 15)).toBeUndefined();
  });

  it('takes the oldest timestamp and the widest window of its containers', () => {
    const metrics = podMetrics(
      pod,
      { namespace: 'default', name: 'web', uid: 'u', containers: [figures('a', '2026-01-01T00:00:10Z', 10), figures('b', '2026-01-01T00:00:09Z', 11.5)] },
      15,
    );
    expect(metrics).toMatchObject({
      kind: 'PodMetrics',
      apiVersion: 'metrics.k8s.io/v1beta1',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      timestamp: '2026-01-01T00:00:09Z',
      window: '11.5s',
      containers: [
        { name: 'a', usage: { cpu: '1m', memory: '1Ki' } },
        { name: 'b', usage: { cpu: '1m', memory: '1Ki' } },
      ],
    });
  });
});
