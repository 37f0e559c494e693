import { describe, expect, it } from 'vitest';
import type { Deployment } from '@skiff/api';
import { defaultDeployment, validateDeployment } from './deployments.js';

function deployment(mutate: (d: Deployment & Record<string, any>) => void = () => {}): Deployment {
  const d = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
    },
  } as Deployment & Record<string, any>;
  mutate(d);
  defaultDeployment(d);
  return d;
}

const messages = (d: Deployment, old?: Deployment) => validateDeployment(d, old).map((c) => `${c.field}: ${c.message}`);

describe('validateDeployment', () => {
  it('accepts a defaulted deployment', () => {
    expect(validateDeployment(deployment())).toEqual([]);
  });

  it('rejects negative replicas', () => {
    expect(messages(deployment((d) => (d.spec.replicas = -1)))).toEqual(['spec.replicas: Invalid value: -1: must be greater than or equal to 0']);
  });

  it('requires a selector, which then matches nothing in the template', () => {
    expect(messages(deployment((d) => delete (d.spec as Partial<Deployment['spec']>).selector))).toEqual([
      'spec.selector: Required value',
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ]);
  });

  it('requires the selector to match the template labels', () => {
    expect(messages(deployment((d) => (d.spec.template.metadata = { labels: { app: 'x' } })))).toEqual([
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
    ]);
  });

  it('rejects an empty selector', () => {
    expect(messages(deployment((d) => (d.spec.selector = {})))).toEqual([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    ]);
  });

  it('checks selector expressions', () => {
    const d = deployment((x) => {
      x.spec.selector = {
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In' as const },
          { key: 'env', operator: 'Maybe' as never },
        ],
      };
    });
    expect(messages(d)).toEqual([
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'spec.selector.matchExpressions[1].operator: Invalid value: "Maybe": not a valid selector operator',
      expect.stringMatching(/^spec\.selector: Invalid value: v1\.LabelSelector\{.*\}: invalid label selector$/),
    ]);
  });

  it('validates the template as a pod spec with restartPolicy Always', () => {
    const d = deployment((x) => {
      x.spec.template.spec.containers[0]!.image = '';
      x.spec.template.spec.restartPolicy = 'Never';
      x.spec.template.metadata!.labels!['bad key'] = 'x';
    });
    expect(messages(d)).toEqual([
      // Kubernetes reports template labels at `template.labels`, not `template.metadata.labels`.
      expect.stringMatching(/^spec\.template\.labels: Invalid value: "bad key": name part must consist/),
      'spec.template.spec.containers[0].image: Required value',
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]);
  });

  it('checks the rolling update parameters and the progress deadline', () => {
    const d = deployment((x) => {
      x.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '0%', maxSurge: 0 } };
      x.spec.progressDeadlineSeconds = 5;
      x.spec.minReadySeconds = 10;
    });
    expect(messages(d)).toEqual([
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when `maxSurge` is 0',
      'spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds',
    ]);
    expect(messages(deployment((x) => (x.spec.strategy = { type: 'Recreate', rollingUpdate: {} })))).toEqual([
      "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    ]);
    expect(messages(deployment((x) => (x.spec.strategy = { rollingUpdate: { maxUnavailable: 'half' } })))).toEqual([
      "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"half\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ]);
  });

  it('keeps the selector immutable on update', () => {
    const old = deployment();
    const next = deployment((d) => {
      d.spec.selector = { matchLabels: { app: 'web', tier: 'front' } };
      d.spec.template.metadata!.labels = { app: 'web', tier: 'front' };
    });
    expect(messages(next, old)).toEqual([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"front"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    ]);
  });

  it('checks a changed status', () => {
    const old = deployment();
    const next = structuredClone(old);
    next.status = { replicas: 1, readyReplicas: 2, availableReplicas: 1, updatedReplicas: -1 };
    expect(messages(next, old)).toEqual([
      'status.updatedReplicas: Invalid value: -1: must be greater than or equal to 0',
      'status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
    ]);
  });
});

describe('defaultDeployment', () => {
  const template = () => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } });

  it('defaults replicas, strategy, history and deadline, and the template but not pod-only fields', () => {
    const deployment = { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: template() } } as Deployment;
    defaultDeployment(deployment);
    expect(deployment.spec).toMatchObject({
      replicas: 1,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    });
    expect(deployment.spec.template.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler' });
    expect(deployment.spec.template.spec.enableServiceLinks).toBeUndefined();
    expect(deployment.spec.template.spec.containers[0]!.imagePullPolicy).toBe('IfNotPresent');
  });

  it('leaves Recreate without rolling update parameters and keeps an explicit zero', () => {
    const deployment = { metadata: { name: 'web' }, spec: { replicas: 0, strategy: { type: 'Recreate' }, template: template() } } as unknown as Deployment;
    defaultDeployment(deployment);
    expect(deployment.spec.replicas).toBe(0);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
  });
});
