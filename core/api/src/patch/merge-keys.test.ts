import { describe, expect, it } from 'vitest';
import { compileMergeKeys, DEFAULT_MERGE_KEYS, type MergeKeyTable } from './merge-keys.js';

describe('DEFAULT_MERGE_KEYS', () => {
  const rules = compileMergeKeys(DEFAULT_MERGE_KEYS);

  it('finds PodSpec lists wherever a pod spec is embedded', () => {
    const podSpecs = [['spec'], ['spec', 'template', 'spec'], ['spec', 'jobTemplate', 'spec', 'template', 'spec'], ['template', 'spec']];
    for (const podSpec of podSpecs) {
      expect(rules.ruleFor(podSpec, 'containers')).toEqual({ mergeKey: 'name' });
      expect(rules.ruleFor(podSpec, 'initContainers')).toEqual({ mergeKey: 'name' });
      expect(rules.ruleFor(podSpec, 'volumes')).toEqual({ mergeKey: 'name' });
      expect(rules.ruleFor(podSpec, 'imagePullSecrets')).toEqual({ mergeKey: 'name' });
      expect(rules.ruleFor(podSpec, 'tolerations')).toBeUndefined();
      expect(rules.ruleFor([...podSpec, 'containers[]'], 'env')).toEqual({ mergeKey: 'name' });
      expect(rules.ruleFor([...podSpec, 'containers[]'], 'ports')).toEqual({ mergeKey: 'containerPort' });
      expect(rules.ruleFor([...podSpec, 'initContainers[]'], 'volumeMounts')).toEqual({ mergeKey: 'mountPath' });
      expect(rules.ruleFor([...podSpec, 'ephemeralContainers[]'], 'env')).toEqual({ mergeKey: 'name' });
      expect(rules.ruleFor([...podSpec, 'containers[]'], 'args')).toBeUndefined();
    }
  });

  it('tells a Service port list from a container port list', () => {
    expect(rules.ruleFor(['spec'], 'ports')).toEqual({ mergeKey: 'port' });
    expect(rules.ruleFor(['spec', 'containers[]'], 'ports')).toEqual({ mergeKey: 'containerPort' });
    expect(rules.ruleFor(['spec', 'template', 'spec'], 'ports')).toBeUndefined();
  });

  it('covers object metadata, conditions, node and service-account lists', () => {
    expect(rules.ruleFor(['metadata'], 'finalizers')).toBe('merge');
    expect(rules.ruleFor(['spec', 'template', 'metadata'], 'finalizers')).toBe('merge');
    expect(rules.ruleFor(['metadata'], 'ownerReferences')).toEqual({ mergeKey: 'uid' });
    expect(rules.ruleFor(['status'], 'conditions')).toEqual({ mergeKey: 'type' });
    expect(rules.ruleFor(['status'], 'addresses')).toEqual({ mergeKey: 'type' });
    expect(rules.ruleFor(['spec'], 'podCIDRs')).toBe('merge');
    expect(rules.ruleFor([], 'secrets')).toEqual({ mergeKey: 'name' });
    expect(rules.ruleFor(['spec'], 'secrets')).toBeUndefined();
    expect(rules.ruleFor(['spec'], 'taints')).toBeUndefined();
  });
});

describe('compileMergeKeys', () => {
  it('prefers the longest match, and a rooted pattern over an any-prefix one of the same length', () => {
    const table: MergeKeyTable = {
      '*.items': { mergeKey: 'id' },
      '*.special.items': { mergeKey: 'key' },
      'special.items': 'merge',
    };
    const rules = compileMergeKeys(table);
    expect(rules.ruleFor([], 'items')).toEqual({ mergeKey: 'id' });
    expect(rules.ruleFor(['a', 'b'], 'items')).toEqual({ mergeKey: 'id' });
    expect(rules.ruleFor(['a', 'special'], 'items')).toEqual({ mergeKey: 'key' });
    expect(rules.ruleFor(['special'], 'items')).toBe('merge');
  });

  it('compiles each table once', () => {
    expect(compileMergeKeys(DEFAULT_MERGE_KEYS)).toBe(compileMergeKeys(DEFAULT_MERGE_KEYS));
  });

  it.each(['spec..containers', 'spec.containers[]', '*', 'spec.*.containers', 'a[b].c', ''])('rejects the malformed pattern %j', (pattern) => {
    expect(() => compileMergeKeys({ [pattern]: { mergeKey: 'name' } })).toThrow(`invalid merge key pattern "${pattern}"`);
  });

  it('rejects malformed rules', () => {
    expect(() => compileMergeKeys({ 'spec.items': { mergeKey: '' } })).toThrow('invalid merge rule for "spec.items"');
    expect(() => compileMergeKeys({ 'spec.items': 'replace' as 'merge' })).toThrow('invalid merge rule for "spec.items"');
  });
});
