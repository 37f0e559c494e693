import type { PodTemplateSpec } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { templateHash } from './template-hash.js';

const template: PodTemplateSpec = {
  metadata: { labels: { app: 'web', tier: 'front' } },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }], restartPolicy: 'Always' },
};

describe('templateHash', () => {
  it('is a short lowercase alphanumeric string from the safe alphabet', () => {
    expect(templateHash(template)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  });

  it('is stable: the same template always hashes alike, whatever the key order', () => {
    const reordered: PodTemplateSpec = {
      spec: { restartPolicy: 'Always', containers: [{ ports: [{ containerPort: 80 }], image: 'nginx:1.25', name: 'app' }] },
      metadata: { labels: { tier: 'front', app: 'web' } },
    };
    expect(templateHash(reordered)).toBe(templateHash(template));
    expect(templateHash(structuredClone(template))).toBe(templateHash(template));
  });

  it('does not depend on the process: a known template has a known hash', () => {
    expect(templateHash({ spec: { containers: [{ name: 'app', image: 'nginx' }] } })).toBe(
      templateHash({ spec: { containers: [{ image: 'nginx', name: 'app' }] } }),
    );
    expect(templateHash(template)).toBe('7df886f4d7');
  });

  it('changes when the template changes', () => {
    const changed = structuredClone(template);
    changed.spec.containers[0]!.image = 'nginx:1.26';
    expect(templateHash(changed)).not.toBe(templateHash(template));
  });

  it('changes with the collision count, so a collision can be escaped', () => {
    const hashes = new Set([templateHash(template), templateHash(template, 0), templateHash(template, 1), templateHash(template, 2)]);
    expect(hashes.size).toBe(4);
  });
});
