import { WireReader } from '@skiff/api/protobuf';
import { describe, expect, it } from 'vitest';
import { builtinResources } from '../kinds/index.js';
import { servedGroups } from './groups.js';
import { openApiV2Json, openApiV2Protobuf } from './openapi-v2.js';

const groups = servedGroups(builtinResources());

/** The fields of one protobuf message, by number: strings, or nested bytes. */
function fields(bytes: Uint8Array): Map<number, Uint8Array[]> {
  const reader = new WireReader(bytes);
  const out = new Map<number, Uint8Array[]>();
  while (!reader.done) {
    const { field, wireType } = reader.tag();
    if (wireType !== 2) {
      reader.skip(wireType);
      continue;
    }
    out.set(field, [...(out.get(field) ?? []), reader.bytesField()]);
  }
  return out;
}
const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');

describe('OpenAPI v2', () => {
  it('lists every served kind in definitions, with $refs into definitions and the group-version-kind extension', () => {
    const document = JSON.parse(openApiV2Json(groups));
    const deployment = document.definitions['io.k8s.api.apps.v1.Deployment'];
    expect(deployment['x-kubernetes-group-version-kind']).toEqual([{ group: 'apps', version: 'v1', kind: 'Deployment' }]);
    expect(deployment.properties.spec).toEqual({ $ref: '#/definitions/io.k8s.api.apps.v1.DeploymentSpec' });
    expect(document.definitions['io.k8s.api.core.v1.PodSpec'].properties.containers).toMatchObject({
      type: 'array',
      items: { $ref: '#/definitions/io.k8s.api.core.v1.Container' },
      'x-kubernetes-patch-merge-key': 'name',
    });
    expect(JSON.stringify(document)).not.toContain('#/components/');
  });

  it('encodes the same definitions as a gnostic Document: named schemas with properties, types and vendor extensions', () => {
    const document = fields(openApiV2Protobuf(groups));
    expect(text(document.get(1)?.[0])).toBe('2.0');
    const named = fields(document.get(9)![0]!).get(1)!.map(fields);
    const byName = new Map(named.map((entry) => [text(entry.get(1)?.[0]), fields(entry.get(2)![0]!)]));
    expect(byName.size).toBe(Object.keys(JSON.parse(openApiV2Json(groups)).definitions).length);
    const deployment = byName.get('io.k8s.api.apps.v1.Deployment')!;
    expect(text(fields(deployment.get(22)![0]!).get(1)?.[0])).toBe('object');
    const extensions = deployment.get(31)!.map(fields);
    const gvk = extensions.find((extension) => text(extension.get(1)?.[0]) === 'x-kubernetes-group-version-kind')!;
    expect(text(fields(gvk.get(2)![0]!).get(2)?.[0])).toBe('- group: apps\n  version: v1\n  kind: Deployment\n');
    const properties = fields(deployment.get(25)![0]!).get(1)!.map(fields);
    const spec = properties.find((property) => text(property.get(1)?.[0]) === 'spec')!;
    expect(text(fields(spec.get(2)![0]!).get(1)?.[0])).toBe('#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
  });
});
