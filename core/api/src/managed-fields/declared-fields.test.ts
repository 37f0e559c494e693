import { describe, expect, it } from 'vitest';
import { kindSchema } from '../schemas/from-facts.js';
import { t } from '../schemas/language.js';
import { undeclaredFields } from './declared-fields.js';

describe('undeclaredFields', () => {
  it('names fields a built-in kind does not declare by server-side apply’s field paths', () => {
    const deployment = kindSchema('apps', 'v1', 'Deployment')!;
    const applied = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', unknownMeta: 'x', labels: { any: 'key' } },
      spec: {
        replicas: 1,
        unknownField: { nested: true },
        template: {
          spec: {
            containers: [{ name: 'web', image: 'nginx', imageTag: '1', ports: [{ containerPort: 80, protocol: 'TCP', extra: 1 }] }],
            tolerations: [{ key: 'k', bogus: 1 }],
          },
        },
      },
    };
    expect(undeclaredFields(deployment, applied)).toEqual([
      '.metadata.unknownMeta',
      '.spec.unknownField',
      '.spec.template.spec.containers[name="web"].imageTag',
      '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].extra',
      '.spec.template.spec.tolerations[0].bogus',
    ]);
    expect(undeclaredFields(deployment, { ...applied, metadata: { name: 'd' }, spec: { replicas: 1 } })).toEqual([]);
  });

  it('lets free-form values and objects preserving unknown fields hold anything', () => {
    const schema = t.object(
      'Noxu',
      {
        spec: t.object('Spec', { foo: t.string() }, { package: 'p', openapi: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
        strict: t.object('Strict', { foo: t.string() }, { package: 'p' }),
        anything: t.any(),
      },
      { package: 'p' },
    );
    expect(undeclaredFields(schema, { spec: { unknown: 1, foo: 'x' }, anything: { a: { b: 1 } }, strict: { bar: 1 }, top: 1 })).toEqual([
      '.strict.bar',
      '.top',
    ]);
  });
});
