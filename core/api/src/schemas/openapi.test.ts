import { describe, expect, it } from 'vitest';
import { kindSchema, messageSchema } from './from-facts.js';
import { t, type ObjectSchema } from './language.js';
import { openApiComponentName, toOpenApiComponents, toOpenApiSchema } from './openapi.js';

const deploymentSchema = kindSchema('apps', 'v1', 'Deployment') as ObjectSchema;
const podSchema = kindSchema('', 'v1', 'Pod') as ObjectSchema;
const containerSchema = messageSchema('k8s.io.api.core.v1.Container') as ObjectSchema;

describe('toOpenApiSchema', () => {
  it('converts scalars with their OpenAPI types and formats', () => {
    const schema = t.object(
      'Sample',
      {
        name: t.string('The name.'),
        count: t.int32(),
        big: t.int64(),
        ratio: t.number(),
        on: t.boolean(),
        size: t.quantity(),
        surge: t.intOrString(),
        at: t.time(),
        extra: t.any('Anything.'),
        tags: t.array(t.string()),
        labels: t.map(t.string()),
      },
      { package: 'io.example.v1', description: 'A sample.' },
    );
    expect(toOpenApiSchema(schema)).toEqual({
      type: 'object',
      description: 'A sample.',
      properties: {
        name: { type: 'string', description: 'The name.' },
        count: { type: 'integer', format: 'int32' },
        big: { type: 'integer', format: 'int64' },
        ratio: { type: 'number', format: 'double' },
        on: { type: 'boolean' },
        size: { type: 'string' },
        surge: { type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true },
        at: { type: 'string', format: 'date-time' },
        extra: { 'x-kubernetes-preserve-unknown-fields': true, description: 'Anything.' },
        tags: { type: 'array', items: { type: 'string' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    });
  });

  it('inlines nested structs unless asked to reference them', () => {
    const inline = toOpenApiSchema(podSchema);
    // Descriptions stay empty: upstream's prose is not copied (docs/api-facts.md).
    expect(inline.properties?.spec?.properties?.containers?.items?.properties?.image).toEqual({ type: 'string' });
    const referenced = toOpenApiSchema(podSchema, { ref: (o) => `#/components/schemas/${openApiComponentName(o)}` });
    expect(referenced.properties?.spec?.allOf).toEqual([{ $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' }]);
    expect(referenced['x-kubernetes-group-version-kind']).toEqual([{ group: '', version: 'v1', kind: 'Pod' }]);
  });
});

describe('toOpenApiComponents', () => {
  it('emits every reachable struct once, referencing the others, for kubectl explain', () => {
    const components = toOpenApiComponents([deploymentSchema, podSchema]);
    expect(Object.keys(components)).toEqual(
      expect.arrayContaining([
        'io.k8s.api.apps.v1.Deployment',
        'io.k8s.api.apps.v1.DeploymentSpec',
        'io.k8s.api.core.v1.PodTemplateSpec',
        'io.k8s.api.core.v1.Container',
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      ]),
    );
    const deployment = components['io.k8s.api.apps.v1.Deployment']!;
    expect(deployment['x-kubernetes-group-version-kind']).toEqual([{ group: 'apps', version: 'v1', kind: 'Deployment' }]);
    expect(deployment.description).toBeUndefined();
    expect(components['io.k8s.api.core.v1.PodSpec']!.properties!.containers).toEqual({
      type: 'array',
      items: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.Container' }] },
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    });
    expect(components['io.k8s.api.core.v1.HostAlias']!.required).toEqual(['ip']);
    expect(components['io.k8s.api.core.v1.PodSpec']!.properties!.restartPolicy).toEqual({
      type: 'string',
      enum: ['Always', 'Never', 'OnFailure'],
    });
    expect(containerSchema.name).toBe('Container');
  });
});
