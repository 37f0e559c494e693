import { describe, expect, it } from 'vitest';
import { APPS_KINDS } from './index.js';
import { kindHarness } from '../../test-support/kind-harness.js';

const { create, fields } = kindHarness(APPS_KINDS);

const statefulSet = (volumeMounts: { name: string; mountPath: string }[], volumeClaimTemplates: unknown[] = []) => ({
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    serviceName: 'nginx',
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', volumeMounts }] } },
    volumeClaimTemplates,
  },
});

describe('statefulsets', () => {
  it('lets containers mount a claim template by its name, as the pods will have it', () => {
    const sts = create(
      'statefulsets',
      statefulSet([{ name: 'www', mountPath: '/usr/share/nginx/html' }], [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'] } }]),
    ) as any;
    expect(sts.spec.template.spec.volumes).toBeUndefined();
  });

  it('still refuses a mount of a volume that is neither in the template nor a claim template', () => {
    expect(fields('statefulsets', statefulSet([{ name: 'www', mountPath: '/data' }]))).toEqual([
      'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "www"',
    ]);
  });
});
