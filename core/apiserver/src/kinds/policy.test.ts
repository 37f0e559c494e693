import { describe, expect, it } from 'vitest';
import { POLICY_KINDS } from './policy.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(POLICY_KINDS);
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
