import { describe, expect, it } from 'vitest';
import type { Affinity, Node, NodeSelectorTerm } from './generated/types.js';
import {
  nodeSelectorErrors,
  nodeSelectorMatches,
  nodeSelectorTermErrors,
  podFitsNodeAffinity,
  preferredNodeAffinityScore,
  preferredSchedulingTermsErrors,
} from './node-affinity.js';

const node = (name: string, labels: Record<string, string> = {}): Node => ({ metadata: { name, labels } });
const required = (...terms: NodeSelectorTerm[]): Affinity => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
});
const fits = (affinity: Affinity, labels: Record<string, string> = {}, name = 'n1') => podFitsNodeAffinity({ containers: [], affinity }, node(name, labels));

describe('node affinity matching', () => {
  it('ORs terms and ANDs the requirements within a term', () => {
    const affinity = required(
      {
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['a'] },
          { key: 'gpu', operator: 'Exists' },
        ],
      },
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
    );
    expect(fits(affinity, { zone: 'a', gpu: '1' })).toBe(true);
    expect(fits(affinity, { zone: 'a' })).toBe(false);
    expect(fits(affinity, { zone: 'b' })).toBe(true);
  });

  it('supports NotIn, DoesNotExist, Gt and Lt (integers only)', () => {
    expect(fits(required({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }), {})).toBe(true);
    expect(fits(required({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }), { zone: 'a' })).toBe(false);
    expect(fits(required({ matchExpressions: [{ key: 'spot', operator: 'DoesNotExist' }] }), { spot: '' })).toBe(false);
    expect(fits(required({ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }), { cores: '8' })).toBe(true);
    expect(fits(required({ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['4'] }] }), { cores: '8' })).toBe(false);
    expect(fits(required({ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }), { cores: 'many' })).toBe(false);
  });

  it('matches metadata.name fields with one value each; an empty term or term list matches nothing', () => {
    const named = (operator: string, ...values: string[]) => required({ matchFields: [{ key: 'metadata.name', operator, values }] });
    expect(fits(named('In', 'n1'), {}, 'n1')).toBe(true);
    expect(fits(named('In', 'n1'), {}, 'n2')).toBe(false);
    expect(fits(named('NotIn', 'n1'), {}, 'n2')).toBe(true);
    // Kubernetes cannot parse a field requirement with two values: the term matches no node.
    expect(fits(named('In', 'n1', 'n2'), {}, 'n1')).toBe(false);
    expect(fits(required({}))).toBe(false);
    expect(fits(required())).toBe(false);
    expect(podFitsNodeAffinity({ containers: [] }, node('n1'))).toBe(true);
    expect(podFitsNodeAffinity({ containers: [], nodeSelector: { a: 'b' } }, node('n1'))).toBe(false);
    expect(podFitsNodeAffinity({ containers: [], nodeSelector: { a: 'b' } }, node('n1', { a: 'b', c: 'd' }))).toBe(true);
  });

  it('skips a term it cannot parse and still matches by the others', () => {
    const selector = {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: [] }] }, { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }],
    };
    expect(nodeSelectorMatches(selector, node('n1', { zone: 'a' }))).toBe(true);
    expect(nodeSelectorMatches({ nodeSelectorTerms: [selector.nodeSelectorTerms[0]!] }, node('n1', { zone: 'a' }))).toBe(false);
  });

  it('says why a term is invalid, with the path of the field', () => {
    expect(nodeSelectorTermErrors({ matchExpressions: [{ key: 'zone', operator: 'Near', values: ['a'] }] })).toEqual([
      'matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
    ]);
    expect(nodeSelectorErrors({ nodeSelectorTerms: [{}, { matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['x'] }] }] }, 'required')).toEqual([
      `required.nodeSelectorTerms[1].matchExpressions[0].values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`,
    ]);
    expect(preferredSchedulingTermsErrors([{ weight: 1, preference: { matchFields: [{ key: 'metadata.name', operator: 'Exists' }] } }], 'preferred')).toEqual([
      'preferred[0].matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
    ]);
    expect(nodeSelectorTermErrors({ matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] })[0]).toMatch(
      /^matchExpressions\[0\]\.key: Invalid value: "a\/b\/c"/,
    );
  });

  it('scores the summed weights of the preferred terms a node matches', () => {
    const terms = [
      { weight: 5, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
      { weight: 2, preference: { matchExpressions: [{ key: 'ssd', operator: 'Exists' }] } },
      { weight: 9, preference: {} },
      { weight: 0, preference: { matchExpressions: [{ key: 'ssd', operator: 'Exists' }] } },
    ];
    expect(preferredNodeAffinityScore(terms, node('n1', { zone: 'a', ssd: '' }))).toBe(7);
    expect(preferredNodeAffinityScore(terms, node('n1', { ssd: '' }))).toBe(2);
    expect(preferredNodeAffinityScore(terms, node('n1'))).toBe(0);
    expect(preferredNodeAffinityScore(undefined, node('n1'))).toBe(0);
  });
});
