import type { Pod } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { HpaError } from './errors.js';
import { averageValueReplicas, groupPods, utilizationReplicas, type PodSample, type ReplicaSettings } from './replicas.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const SECOND = 1000;
const iso = (agoMs: number) => new Date(NOW - agoMs).toISOString();

interface PodShape {
  /** CPU request; `null` for none. */
  request?: string | null;
  phase?: 'Pending' | 'Running' | 'Failed';
  ready?: boolean;
  startedAgo?: number;
  /** When the Ready condition last changed. */
  readySinceAgo?: number;
  deleting?: boolean;
}

function pod(name: string, shape: PodShape = {}): Pod {
  const { request = '100m', phase = 'Running', ready = true, startedAgo = 600 * SECOND, readySinceAgo = 590 * SECOND, deleting = false } = shape;
  return {
    metadata: { name, namespace: 'default', ...(deleting ? { deletionTimestamp: iso(0) } : {}) },
    spec: { containers: [{ name: 'app', image: 'nginx', ...(request === null ? {} : { resources: { requests: { cpu: request } } }) }] },
    status: {
      phase,
      startTime: iso(startedAgo),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: iso(readySinceAgo) }],
    },
  };
}

/** Samples taken now over a 15 s window; `undefined` leaves the pod without one. */
function samples(values: Record<string, number | undefined>): Map<string, PodSample> {
  const map = new Map<string, PodSample>();
  for (const [name, value] of Object.entries(values)) if (value !== undefined) map.set(name, { value, timestamp: NOW, windowMs: 15 * SECOND });
  return map;
}

const settings: ReplicaSettings = {
  tolerances: { scaleUp: 0.1, scaleDown: 0.1 },
  cpuInitializationPeriodMs: 300 * SECOND,
  initialReadinessDelayMs: 30 * SECOND,
  now: NOW,
};

interface Row {
  name: string;
  pods: Pod[];
  usage: Record<string, number | undefined>;
  current: number;
  target?: number;
  tolerances?: ReplicaSettings['tolerances'];
  want: number;
  wantUtilization?: number;
}

const fresh = { startedAgo: 20 * SECOND, readySinceAgo: 5 * SECOND };

const rows: Row[] = [
  {
    name: 'keeps the count within the tolerance',
    pods: [pod('a'), pod('b'), pod('c')],
    usage: { a: 52, b: 52, c: 52 },
    current: 3,
    want: 3,
    wantUtilization: 52,
  },
  { name: 'scales up by the usage ratio', pods: [pod('a'), pod('b'), pod('c')], usage: { a: 100, b: 100, c: 100 }, current: 3, want: 6, wantUtilization: 100 },
  {
    name: 'scales down by the usage ratio, rounding up',
    pods: [pod('a'), pod('b'), pod('c'), pod('d')],
    usage: { a: 20, b: 20, c: 20, d: 20 },
    current: 4,
    want: 2,
  },
  {
    name: 'a custom tolerance widens the band it keeps',
    pods: [pod('a'), pod('b')],
    usage: { a: 70, b: 70 },
    current: 2,
    tolerances: { scaleUp: 0.5, scaleDown: 0.1 },
    want: 2,
  },
  {
    name: 'a pod without metrics counts as using its request on a scale-down',
    pods: [pod('a'), pod('b'), pod('c'), pod('d')],
    usage: { a: 10, b: 10, c: 10, d: undefined },
    current: 4,
    // Alone the three measured pods would ask for ceil(0.2 × 3) = 1; with d at 100 %: 130/400 → 32 % → ceil(0.64 × 4) = 3.
    want: 3,
    wantUtilization: 10,
  },
  {
    name: 'pods without metrics count as idle on a scale-up',
    pods: [pod('a'), pod('b'), pod('c')],
    usage: { a: 100, b: undefined, c: undefined },
    current: 3,
    // Alone a would ask for ceil(2 × 1) = 2; with b and c idle: 100/300 → 33 %, below target: the count stays.
    want: 3,
  },
  {
    name: 'unready pods count as idle on a scale-up',
    pods: [pod('a'), pod('b'), pod('c', { phase: 'Pending' }), pod('d', { ready: false, ...fresh })],
    usage: { a: 150, b: 150, c: undefined, d: 400 },
    current: 4,
    // 300/400 = 75 % → 1.5 × 4 = 6; d's 400m (its start-up) would have asked for 14.
    want: 6,
  },
  {
    name: 'unready pods are left out of a scale-down',
    pods: [pod('a'), pod('b'), pod('c', { phase: 'Pending' }), pod('d', { phase: 'Pending' })],
    usage: { a: 10, b: 10 },
    current: 4,
    want: 1,
  },
  {
    name: 'keeps the count when the assumed usage flips the direction',
    pods: [pod('a'), pod('b'), pod('c'), pod('d')],
    usage: { a: 60, b: undefined, c: undefined, d: undefined },
    current: 4,
    want: 4,
  },
  {
    name: 'ignores deleted and failed pods',
    pods: [pod('a'), pod('b'), pod('c', { deleting: true }), pod('d', { phase: 'Failed' })],
    usage: { a: 100, b: 100, c: 5000, d: 5000 },
    current: 2,
    want: 4,
  },
  {
    name: 'a CPU sample from a pod still initializing that may include its start-up is unready',
    pods: [pod('a'), pod('b', fresh)],
    usage: { a: 100, b: 100 },
    current: 2,
    // b is unready (ready 5 s ago, 15 s window): 100/200 = 50 % → on target.
    want: 2,
  },
  {
    name: 'a CPU sample taken wholly after the pod became ready counts, even while initializing',
    pods: [pod('a'), pod('b', { startedAgo: 100 * SECOND, readySinceAgo: 60 * SECOND })],
    usage: { a: 100, b: 100 },
    current: 2,
    want: 4,
  },
  {
    name: 'an initialized pod that went unready later still counts',
    pods: [pod('a'), pod('b', { ready: false, readySinceAgo: 60 * SECOND })],
    usage: { a: 100, b: 100 },
    current: 2,
    want: 4,
  },
];

describe('utilizationReplicas', () => {
  it.each(rows)('$name', ({ pods, usage, current, target = 50, tolerances, want, wantUtilization }) => {
    const proposal = utilizationReplicas(
      { pods, samples: samples(usage), resource: 'cpu', currentReplicas: current, targetUtilization: target },
      { ...settings, ...(tolerances ? { tolerances } : {}) },
    );
    expect(proposal.replicas).toBe(want);
    if (wantUtilization !== undefined) expect(proposal.utilization).toBe(wantUtilization);
    expect(proposal.timestamp).toBe(NOW);
  });

  it('reports Σusage / Σrequests and the average usage', () => {
    const pods = [pod('a', { request: '100m' }), pod('b', { request: '300m' })];
    const proposal = utilizationReplicas({ pods, samples: samples({ a: 100, b: 100 }), resource: 'cpu', currentReplicas: 2, targetUtilization: 50 }, settings);
    expect(proposal).toMatchObject({ utilization: 50, averageMillis: 100, replicas: 2 });
  });

  it.each([
    { name: 'a container without a request', pods: [pod('a'), pod('b', { request: null })], usage: { a: 10, b: 10 }, code: 'SKIFF_ERR_HPA_MISSING_REQUEST' },
    { name: 'no pods', pods: [], usage: {}, code: 'SKIFF_ERR_HPA_NO_PODS' },
    { name: 'no ready pod with metrics', pods: [pod('a', { phase: 'Pending' }), pod('b')], usage: {}, code: 'SKIFF_ERR_HPA_NO_READY_METRICS' },
  ])('fails with $code for $name', ({ pods, usage, code }) => {
    const attempt = () => utilizationReplicas({ pods, samples: samples(usage), resource: 'cpu', currentReplicas: 2, targetUtilization: 50 }, settings);
    expect(attempt).toThrow(HpaError);
    expect(attempt).toThrow(expect.objectContaining({ code }));
  });

  it('names the container and pod without a request', () => {
    expect(() =>
      utilizationReplicas(
        { pods: [pod('web-1', { request: null })], samples: samples({ 'web-1': 1 }), resource: 'cpu', currentReplicas: 1, targetUtilization: 50 },
        settings,
      ),
    ).toThrow('missing request for cpu in container app of Pod web-1');
  });
});

describe('averageValueReplicas', () => {
  it.each([
    { usage: { a: 300, b: 300 }, current: 2, want: 6 },
    { usage: { a: 105, b: 100 }, current: 2, want: 2 },
    { usage: { a: 20, b: 30 }, current: 2, want: 1 },
    // b missing on a scale-down counts as on target: (20 + 100) / 2 = 60 → ceil(0.6 × 2) = 2.
    { usage: { a: 20, b: undefined }, current: 2, want: 2 },
  ])('$usage against 100m per pod → $want', ({ usage, current, want }) => {
    const proposal = averageValueReplicas(
      { pods: [pod('a'), pod('b')], samples: samples(usage), resource: 'cpu', currentReplicas: current, targetAverageMillis: 100 },
      settings,
    );
    expect(proposal.replicas).toBe(want);
  });
});

describe('groupPods', () => {
  it('sorts pods into ready, unready, missing and ignored', () => {
    const pods = [pod('ready'), pod('pending', { phase: 'Pending' }), pod('no-metrics'), pod('gone', { deleting: true }), pod('warming', fresh)];
    const groups = groupPods(pods, samples({ ready: 1, pending: 1, gone: 1, warming: 1 }), 'cpu', settings);
    expect(groups).toEqual({
      ready: new Set(['ready']),
      unready: new Set(['pending', 'warming']),
      missing: new Set(['no-metrics']),
      ignored: new Set(['gone']),
    });
  });

  it('applies the readiness rules to CPU only', () => {
    const groups = groupPods([pod('warming', fresh)], samples({ warming: 1 }), 'memory', settings);
    expect([...groups.ready]).toEqual(['warming']);
  });
});
