import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { APIEXTENSIONS_KINDS } from './apiextensions.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { CREATED, create, fields, cells } = kindHarness(APIEXTENSIONS_KINDS);

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
