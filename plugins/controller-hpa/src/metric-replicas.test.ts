import type { MetricSpec, MetricTarget, Pod } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { parseGoDuration, podUsageOf, type PodUsage } from './metrics-source.js';
import { replicasForMetric } from './metric-replicas.js';
import type { ReplicaSettings } from './replicas.js';
import { setCondition } from './conditions.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const settings: ReplicaSettings = { tolerances: { scaleUp: 0.1, scaleDown: 0.1 }, cpuInitializationPeriodMs: 0, initialReadinessDelayMs: 0, now: NOW };
const started = new Date(NOW - 600_000).toISOString();

const pod = (name: string): Pod => ({
  metadata: { name, namespace: 'default' },
  spec: {
    containers: [
      { name: 'app', image: 'nginx', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
      { name: 'sidecar', image: 'envoy', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
    ],
  },
  status: { phase: 'Running', startTime: started, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: started }] },
});

const usage = (name: string, app: string, sidecar: string): PodUsage =>
  podUsageOf({
    metadata: { name, namespace: 'default' },
    timestamp: new Date(NOW).toISOString(),
    window: '15.002s',
    containers: [
      { name: 'app', usage: { cpu: app, memory: '32Mi' } },
      { name: 'sidecar', usage: { cpu: sidecar, memory: '16Mi' } },
    ],
  });

const input = (samples: PodUsage[]) => ({ pods: [pod('a'), pod('b')], currentReplicas: 2, usage: async () => samples });
const cpu = (target: MetricTarget): MetricSpec => ({
  type: 'Resource',
  resource: { name: 'cpu', target },
});

describe('replicasForMetric', () => {
  it('reads a Utilization target over all containers and reports utilization and average usage', async () => {
    const result = await replicasForMetric(
      cpu({ type: 'Utilization', averageUtilization: 50 }),
      input([usage('a', '150m', '50m'), usage('b', '150000000n', '50m')]),
      settings,
    );
    expect(result).toEqual({
      replicas: 4,
      name: 'cpu resource utilization (percentage of request)',
      status: { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 100, averageValue: '200m' } } },
      timestamp: NOW,
    });
  });

  it('reads an AverageValue target (average usage in decimal form, as upstream prints it)', async () => {
    const result = await replicasForMetric(
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '24Mi' } } },
      input([usage('a', '1m', '1m'), usage('b', '1m', '1m')]),
      settings,
    );
    expect(result).toMatchObject({ replicas: 4, name: 'memory resource', status: { resource: { name: 'memory', current: { averageValue: '50331648' } } } });
  });

  it('reads one container for a ContainerResource metric', async () => {
    const spec: MetricSpec = {
      type: 'ContainerResource',
      containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 50 } },
    };
    const result = await replicasForMetric(spec, input([usage('a', '150m', '0'), usage('b', '150m', '0')]), settings);
    expect(result).toMatchObject({
      replicas: 6,
      name: 'cpu container resource utilization (percentage of request)',
      status: { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', current: { averageUtilization: 150 } } },
    });
  });

  it('fails as upstream words it when the metrics API answers nothing or fails', async () => {
    const target = cpu({ type: 'Utilization', averageUtilization: 50 });
    await expect(replicasForMetric(target, input([]), settings)).rejects.toThrow(
      'failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    );
    const failing = { ...input([]), usage: () => Promise.reject(new Error('the server could not find the requested resource')) };
    await expect(replicasForMetric(target, failing, settings)).rejects.toMatchObject({ code: 'SKIFF_ERR_HPA_METRICS_API' });
  });

  it('cannot read Pods, Object or External metrics (no custom or external metrics API)', async () => {
    const spec: MetricSpec = { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '1' } } };
    await expect(replicasForMetric(spec, input([]), settings)).rejects.toThrow(
      'unable to get External metric: external.metrics.k8s.io is not served by this cluster',
    );
  });
});

describe('parseGoDuration', () => {
  it.each([
    ['15.002s', 15_002],
    ['1m0s', 60_000],
    ['500ms', 500],
    ['1h2m3s', 3_723_000],
    ['0', 0],
    ['15', Number.NaN],
  ])('%s → %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });
});

describe('setCondition', () => {
  it('keeps the transition time while the status stays and orders the conditions', () => {
    let conditions = setCondition([], 'ScalingActive', true, 'ValidMetricFound', 'one', NOW);
    conditions = setCondition(conditions, 'AbleToScale', true, 'ReadyForNewScale', 'two', NOW);
    conditions = setCondition(conditions, 'ScalingActive', true, 'ValidMetricFound', 'three', NOW + 60_000);
    expect(conditions.map((c) => [c.type, c.message, c.lastTransitionTime])).toEqual([
      ['AbleToScale', 'two', '2026-01-01T12:00:00Z'],
      ['ScalingActive', 'three', '2026-01-01T12:00:00Z'],
    ]);
    conditions = setCondition(conditions, 'ScalingActive', false, 'FailedGetResourceMetric', 'four', NOW + 60_000);
    expect(conditions[1]).toMatchObject({ status: 'False', lastTransitionTime: '2026-01-01T12:01:00Z' });
  });
});
