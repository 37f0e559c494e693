import { describe, expect, it } from 'vitest';
import { AUTOSCALING_KINDS } from './autoscaling.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(AUTOSCALING_KINDS);
const hpas = AUTOSCALING_KINDS[0]!;
const body = {
  metadata: { name: 'web', namespace: 'default' },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5 },
};

describe('horizontal pod autoscalers', () => {
  it('defaults one replica and an 80% CPU target, and prints like kubectl', () => {
    const hpa = create(hpas, body) as any;
    expect(hpa.spec.minReplicas).toBe(1);
    expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    expect(hpa.status).toEqual({});
    expect(cells(hpas, hpa)).toEqual(['web', 'Deployment/web', 'cpu: <unknown>/80%', '1', 5, 0, '3h5m']);
    hpa.status = { currentReplicas: 2, currentMetrics: [{ type: 'Resource', resource: { current: { averageUtilization: 41 } } }] };
    expect(cells(hpas, hpa).slice(2, 6)).toEqual(['cpu: 41%/80%', '1', 5, 2]);
  });

  it('fills in the rest of a behavior section', () => {
    const hpa = create(hpas, { ...body, spec: { ...body.spec, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } } }) as any;
    expect(hpa.spec.behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
  });

  it('checks replica bounds, the target and metrics', () => {
    expect(fields(hpas, { ...body, spec: { ...body.spec, minReplicas: 0, maxReplicas: 0 } })).toEqual([
      'spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
      'spec.maxReplicas: Invalid value: 0: must be greater than 0',
    ]);
    expect(fields(hpas, { ...body, spec: { ...body.spec, minReplicas: 3, maxReplicas: 2 } })).toEqual([
      'spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`',
    ]);
    expect(fields(hpas, { ...body, spec: { ...body.spec, scaleTargetRef: { kind: 'Deployment' } } })).toEqual(['spec.scaleTargetRef.name: Required value']);
    const metrics = [{ type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 0 } } }];
    expect(fields(hpas, { ...body, spec: { ...body.spec, metrics } })).toEqual([
      'spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
    ]);
  });
});
