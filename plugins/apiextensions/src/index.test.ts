import type { CustomResourceDefinition } from '@skiff/api';
import { Kernel, type AdmissionRequest } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import plugin from './index.js';
import { MAX_PATTERN_BYTES } from './schema/patterns.js';
import { isCompiled } from './schema/regex.js';
import type { JSONSchemaProps } from './schema/types.js';

const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);

function crd(...schemas: JSONSchemaProps[]): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: schemas.map((schema, i) => ({ name: `v${i + 1}`, served: true, storage: i === 0, schema: { openAPIV3Schema: schema } })),
    },
  };
}

const withPattern = (pattern: string, more: Record<string, JSONSchemaProps> = {}): JSONSchemaProps => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: { s: { type: 'string', pattern }, ...more } } },
});

async function admit(object: CustomResourceDefinition, old?: CustomResourceDefinition): Promise<string[]> {
  const request = {
    operation: old ? 'UPDATE' : 'CREATE',
    kind: { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' },
    resource: { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' },
    subresource: '',
    namespace: '',
    name: object.metadata.name!,
    object,
    oldObject: old,
    user: { username: 'alice', groups: [] },
    dryRun: false,
    get: async () => undefined,
  } as AdmissionRequest;
  try {
    await kernel.hooks.validate.promise(request);
    return [];
  } catch (err) {
    const status = err as { status?: number; details?: { causes?: { field?: string; message?: string }[] } };
    expect(status.status).toBe(422);
    return (status.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
  }
}

const LONG = 'a'.repeat(100_000);
const SPEC = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[s].pattern';

describe('CRD patterns at create and update', () => {
  it('refuse a 100,000-character pattern on create as a 422 naming it', async () => {
    expect(await admit(crd(withPattern(LONG)))).toEqual([`${SPEC}: Too long: may not be more than ${MAX_PATTERN_BYTES} bytes`]);
    expect(isCompiled(LONG)).toBe(false);
  });

  it('let an update that leaves the schema as stored through, and refuse one that changes it', async () => {
    const stored = crd(withPattern(LONG));
    const relabeled = { ...stored, metadata: { ...stored.metadata, labels: { team: 'a' } } };
    expect(await admit(relabeled, stored)).toEqual([]);
    const changed = crd(withPattern(LONG, { n: { type: 'integer' } }));
    expect(await admit(changed, stored)).toEqual([`${SPEC}: Too long: may not be more than ${MAX_PATTERN_BYTES} bytes`]);
  });

  it('hold each version on its own: a new version may not bring a long pattern to a CRD that has one', async () => {
    const stored = crd(withPattern(LONG));
    const added = crd(withPattern(LONG), withPattern(`b${LONG}`));
    expect(await admit(added, stored)).toEqual([
      `spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[s].pattern: Too long: may not be more than ${MAX_PATTERN_BYTES} bytes`,
    ]);
  });

  it('refuse patterns that each fit but together pass the CRD total, without compiling them, and accept them shrunk', async () => {
    const big = (tag: string) => `${tag}`.padEnd(MAX_PATTERN_BYTES, 'x');
    const more = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}`, { type: 'string', pattern: big(`${i}`) } as JSONSchemaProps]));
    const stored = crd(withPattern('^ok$', more));
    expect(await admit(stored)).toEqual([
      "spec.versions: Forbidden: the patterns of all versions' schemas have 32772 bytes together, more than the 32768 allowed",
    ]);
    expect(isCompiled(big('0'))).toBe(false);
    const { f0: _dropped, ...fewer } = more;
    const shrunk = crd(withPattern('^ok$', { ...fewer, f8: { type: 'string', pattern: 'y'.repeat(100) } }));
    expect(await admit(shrunk, stored)).toEqual([]);
  });
});
