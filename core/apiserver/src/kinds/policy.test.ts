import type { KubeObject, ResourceDefinition } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { POLICY_KINDS } from './policy.js';

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
const pdbs = POLICY_KINDS[0]!;
const body = { metadata: { name: 'web', namespace: 'default' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } };

describe('pod disruption budgets', () => {
  it('starts with nothing allowed and prints N/A for the unset bound', () => {
    const pdb = create(pdbs, body);
    expect(pdb.status).toEqual({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    expect(cells(pdbs, pdb)).toEqual(['web', '2', 'N/A', 0, '3h5m']);
    expect(cells(pdbs, create(pdbs, { ...body, spec: { maxUnavailable: '25%' } }))).toEqual(['web', 'N/A', '25%', 0, '3h5m']);
  });

  it('takes one bound only, as a count or a percentage up to 100%', () => {
    expect(fields(pdbs, { ...body, spec: { ...body.spec, maxUnavailable: 1 } })).toEqual([
      'spec: Invalid value: {"minAvailable":2,"selector":{"matchLabels":{"app":"web"}},"maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set',
    ]);
    expect(fields(pdbs, { ...body, spec: { minAvailable: '150%' } })).toEqual(['spec.minAvailable: Invalid value: "150%": must not be greater than 100%']);
    expect(fields(pdbs, { ...body, spec: { maxUnavailable: -1 } })).toEqual(['spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0']);
    expect(fields(pdbs, { ...body, spec: { minAvailable: '1', unhealthyPodEvictionPolicy: 'Never' } })).toEqual([
      "spec.minAvailable: Invalid value: \"1\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
      'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
    ]);
  });
});
