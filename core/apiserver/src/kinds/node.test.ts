import type { KubeObject, ResourceDefinition } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { NODE_KINDS } from './node.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const CREATED = new Date(NOW - 3 * 3600_000 - 5 * 60_000).toISOString();

function admit(d: ResourceDefinition, body: Record<string, unknown>, old?: KubeObject) {
  const object = structuredClone(body) as KubeObject;
  expect(d.decode!(object, true)).toEqual({ errors: [], unknownFields: [] });
  if (!old) d.prepareForCreate?.(object);
  d.defaults?.(object);
  const causes = d.validate!(object, old).map((c) => `${c.field}: ${c.message}`);
  object.metadata.creationTimestamp ??= CREATED;
  return { object, causes };
}

function create(d: ResourceDefinition, body: Record<string, unknown>): KubeObject {
  const { object, causes } = admit(d, body);
  expect(causes).toEqual([]);
  return object;
}

const fields = (d: ResourceDefinition, body: Record<string, unknown>, old?: KubeObject) => admit(d, body, old).causes;
const cells = (d: ResourceDefinition, object: KubeObject) => d.table!.cells(object, NOW);
const runtimeClasses = NODE_KINDS[0]!;

describe('runtime classes', () => {
  it('prints the handler and keeps it fixed', () => {
    const rc = create(runtimeClasses, { metadata: { name: 'gvisor' }, handler: 'runsc', scheduling: { nodeSelector: { sandbox: 'true' } } });
    expect(cells(runtimeClasses, rc)).toEqual(['gvisor', 'runsc', '3h5m']);
    expect(fields(runtimeClasses, { ...rc, handler: 'kata' }, rc)).toEqual(['handler: Invalid value: "kata": field is immutable']);
  });

  it('requires a DNS-label handler', () => {
    expect(fields(runtimeClasses, { metadata: { name: 'x' } })).toEqual(['handler: Required value']);
    expect(fields(runtimeClasses, { metadata: { name: 'x' }, handler: 'Run_SC' })).toEqual([
      "handler: Invalid value: \"Run_SC\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });
});
