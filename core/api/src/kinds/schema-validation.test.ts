import { describe, expect, it } from 'vitest';
import { defineKind } from './define-kind.js';
import { validateAgainstSchema } from './schema-validation.js';

describe('validateAgainstSchema', () => {
  const pdb = defineKind({
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    resource: 'poddisruptionbudgets',
    namespaced: true,
    subresources: ['status'],
  });
  const condition = (fields: Record<string, unknown>) => ({
    metadata: { name: 'web', namespace: 'default' },
    status: {
      conditions: [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', lastTransitionTime: '2026-11-27T00:00:00Z', ...fields }],
    },
  });

  it("lets a Condition's message be empty, as upstream's condition validation does, but not its reason", () => {
    expect(validateAgainstSchema(pdb.schema!, condition({ message: '' }))).toEqual([]);
    const causes = validateAgainstSchema(pdb.schema!, condition({ message: '', reason: '' }));
    expect(causes.map((cause) => cause.field)).toEqual(['status.conditions[0].reason']);
  });
});

describe('conditions upstream leaves unchecked', () => {
  const service = defineKind({ group: '', version: 'v1', kind: 'Service', resource: 'services', namespaced: true, subresources: ['status'] });

  it("takes a Service's status condition without lastTransitionTime, as upstream's e2e test writes one", () => {
    const object = {
      metadata: { name: 'web', namespace: 'default' },
      status: { conditions: [{ type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Set from e2e test' }] },
    };
    expect(validateAgainstSchema(service.schema!, object)).toEqual([]);
  });
});
