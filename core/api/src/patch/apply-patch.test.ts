import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { applyApplyPatch } from './apply-patch.js';

// What `kubectl apply --server-side` sends: the manifest, as JSON.
const applied = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] },
    },
  },
};

describe('applyApplyPatch', () => {
  it('returns the object to create when there is none yet', () => {
    const created = applyApplyPatch<typeof applied>(undefined, applied);
    expect(created).toEqual(applied);
    expect(created).not.toBe(applied);
    expect(created.spec.template).not.toBe(applied.spec.template);
  });

  it('merges the configuration into the live object, keeping what others set', () => {
    const live = {
      ...structuredClone(applied),
      metadata: { name: 'web', namespace: 'default', uid: 'u-1', resourceVersion: '7', labels: { app: 'web', team: 'blue' } },
      spec: {
        ...structuredClone(applied.spec),
        replicas: 1,
        template: {
          metadata: { labels: { app: 'web' }, annotations: { 'kubectl.kubernetes.io/restartedAt': '2024-05-01T12:00:00Z' } },
          spec: {
            containers: [
              { name: 'web', image: 'nginx:1.24', ports: [{ containerPort: 80 }], resources: { requests: { cpu: '100m' } } },
              { name: 'injected-sidecar', image: 'proxy' },
            ],
          },
        },
      },
      status: { replicas: 1 },
    };
    const result = applyApplyPatch(live, applied);
    expect(result.metadata).toEqual({ name: 'web', namespace: 'default', uid: 'u-1', resourceVersion: '7', labels: { app: 'web', team: 'blue' } });
    expect(result.spec.replicas).toBe(3);
    expect(result.spec.template.metadata.annotations).toEqual({ 'kubectl.kubernetes.io/restartedAt': '2024-05-01T12:00:00Z' });
    expect(result.spec.template.spec.containers).toEqual([
      { name: 'web', image: 'nginx:1.25', ports: [{ containerPort: 80 }], resources: { requests: { cpu: '100m' } } },
      { name: 'injected-sidecar', image: 'proxy' },
    ]);
    expect(result.status).toEqual({ replicas: 1 });
  });

  it('keeps fields a configuration stops setting (no ownership tracking), and deletes explicit nulls', () => {
    type Applied = typeof applied & { spec: { paused?: boolean; minReadySeconds?: number } };
    const live = applyApplyPatch<Applied>(undefined, { ...applied, spec: { ...applied.spec, paused: true, minReadySeconds: 5 } });
    const result = applyApplyPatch(live, { ...applied, spec: { ...applied.spec, minReadySeconds: null } });
    expect(result.spec.paused).toBe(true);
    expect('minReadySeconds' in result.spec).toBe(false);
  });

  it('rejects a configuration that is not an object', () => {
    const run = () => applyApplyPatch({}, '{"kind":"Deployment"}');
    expect(run).toThrow(ApiError);
    expect(run).toThrow('invalid apply patch: the configuration must be an object');
  });
});
