import type { KubeObject, ResourceDefinition } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { APIEXTENSIONS_KINDS } from './apiextensions.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const CREATED = new Date(NOW - 3 * 3600_000 - 5 * 60_000).toISOString();
const definition = (resource: string): ResourceDefinition => APIEXTENSIONS_KINDS.find((d) => d.resource === resource)!;

/** What the API server runs on a create: decode, prepareForCreate, defaults; returns the object and its validation causes. */
function admit(resource: string, body: Record<string, unknown>, old?: KubeObject): { object: KubeObject; causes: { field?: string; message?: string }[] } {
  const d = definition(resource);
  const object = structuredClone(body) as KubeObject;
  expect(d.decode!(object, true).errors).toEqual([]);
  if (!old) d.prepareForCreate?.(object);
  d.defaults?.(object);
  const causes = d.validate!(object, old);
  object.metadata.creationTimestamp ??= CREATED;
  return { object, causes };
}

function create(resource: string, body: Record<string, unknown>): KubeObject {
  const { object, causes } = admit(resource, body);
  expect(causes).toEqual([]);
  return object;
}

const fields = (resource: string, body: Record<string, unknown>, old?: KubeObject) => admit(resource, body, old).causes.map((c) => `${c.field}: ${c.message}`);
const cells = (resource: string, object: KubeObject) => definition(resource).table!.cells(object, NOW);

describe('custom resource definitions', () => {
  const body = {
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    },
  };

  it('defaults singular, listKind and conversion, and prints Created At', () => {
    const crd = create('customresourcedefinitions', body) as KubeObject & { spec: { names: object; conversion: object } };
    expect(crd.spec.names).toEqual({ plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' });
    expect(crd.spec.conversion).toEqual({ strategy: 'None' });
    expect(cells('customresourcedefinitions', crd)).toEqual(['widgets.example.com', CREATED]);
  });

  it('checks the name, group, scope and storage version', () => {
    expect(
      fields('customresourcedefinitions', {
        metadata: { name: 'widgets' },
        spec: { group: 'example', scope: 'Global', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: false }] },
      }),
    ).toEqual([
      'metadata.name: Invalid value: "widgets": must be spec.names.plural+"."+spec.group',
      'spec.group: Invalid value: "example": should be a domain with at least one dot',
      'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
      'spec.versions: Invalid value: ["v1"]: must have exactly one version marked as storage version',
    ]);
    const old = create('customresourcedefinitions', body);
    expect(fields('customresourcedefinitions', { ...structuredClone(old), spec: { ...(old.spec as object), scope: 'Cluster' } }, old)).toEqual([
      'spec.scope: Invalid value: "Cluster": field is immutable',
    ]);
  });
});
