import { describe, expect, it } from 'vitest';
import { cpuRate, figuresOf, resourceUsageOf, workingSetBytes } from './usage.js';

describe('cpuRate', () => {
  it('is the CPU time used between two readings per second: 2.5 s of CPU over 10 s is 250m (250,000,000 nanocores)', () => {
    expect(cpuRate({ timestampMs: 1_000, cpuCoreNanoSeconds: 7e9 }, { timestampMs: 11_000, cpuCoreNanoSeconds: 9.5e9 })).toEqual({
      nanoCores: 250_000_000,
      windowSeconds: 10,
    });
  });

  it('keeps the window as measured, fractions of a millisecond included', () => {
    const rate = cpuRate({ timestampMs: 0, cpuCoreNanoSeconds: 0 }, { timestampMs: 1500.5, cpuCoreNanoSeconds: 3_001_000_000 });
    expect(rate).toEqual({ nanoCores: 2_000_000_000, windowSeconds: 1.5005 });
  });

  it('has no rate when time did not advance, the counter went back (another process) or a reading lacks CPU time', () => {
    expect(cpuRate({ timestampMs: 5, cpuCoreNanoSeconds: 1 }, { timestampMs: 5, cpuCoreNanoSeconds: 2 })).toBeUndefined();
    expect(cpuRate({ timestampMs: 5, cpuCoreNanoSeconds: 10 }, { timestampMs: 6, cpuCoreNanoSeconds: 2 })).toBeUndefined();
    expect(cpuRate({ timestampMs: 5 }, { timestampMs: 6, cpuCoreNanoSeconds: 2 })).toBeUndefined();
  });
});

describe('workingSetBytes', () => {
  it('is usage less the inactive file cache, never below zero', () => {
    expect(workingSetBytes(622_698_496, 140_447_744)).toBe(482_250_752);
    expect(workingSetBytes(100, 400)).toBe(0);
  });
});

describe('figuresOf and resourceUsageOf', () => {
  const labels = { namespace: 'default', name: 'web', uid: 'u1' };
  const reading = (timestampMs: number, cpu: number, memory = 4096) => ({
    id: 'c1',
    metadata: { name: 'app', attempt: 0 },
    timestampMs,
    cpuCoreNanoSeconds: cpu,
    memoryWorkingSetBytes: memory,
  });

  it('needs two readings: a container read once has no figures yet', () => {
    expect(figuresOf({ newer: reading(1000, 5) })).toBeUndefined();
    expect(figuresOf({ older: reading(0, 0), newer: reading(2000, 1e9, 8192) })).toEqual({
      timestamp: '1970-01-01T00:00:02.000Z',
      windowSeconds: 2,
      cpuNanoCores: 500_000_000,
      memoryWorkingSetBytes: 8192,
    });
  });

  it("groups containers by pod and leaves out those (and pods) without two readings; the node's figures come from its pair", () => {
    const usage = resourceUsageOf('node-1', {
      node: {
        older: { timestampMs: 0, cpuCoreNanoSeconds: 0, memoryWorkingSetBytes: 1 },
        newer: { timestampMs: 1000, cpuCoreNanoSeconds: 1e8, memoryWorkingSetBytes: 2 },
      },
      containers: [
        { pod: labels, container: 'app', older: reading(0, 0), newer: reading(1000, 2e8) },
        { pod: labels, container: 'sidecar', older: reading(0, 0), newer: reading(1000, 1e7) },
        { pod: { namespace: 'default', name: 'new', uid: 'u2' }, container: 'app', newer: reading(1000, 1e7) },
      ],
    });
    expect(usage.nodeName).toBe('node-1');
    expect(usage.node).toMatchObject({ cpuNanoCores: 100_000_000, memoryWorkingSetBytes: 2, windowSeconds: 1 });
    expect(usage.pods).toHaveLength(1);
    expect(usage.pods[0]).toMatchObject({ namespace: 'default', name: 'web', uid: 'u1' });
    expect(usage.pods[0]!.containers.map((c) => [c.name, c.cpuNanoCores])).toEqual([
      ['app', 200_000_000],
      ['sidecar', 10_000_000],
    ]);
  });
});
