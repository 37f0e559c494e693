import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { applyMergePatch } from './merge-patch.js';

describe('applyMergePatch', () => {
  // RFC 7386, Appendix A (the cases whose patch is an object).
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('RFC 7386: %j + %j → %j', (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result);
  });

  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' }, annotations: { note: 'x', keep: 'y' } },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'web', image: 'nginx:1.24' }] } } },
  };

  it('applies what kubectl label, annotate and scale send', () => {
    const labelled = applyMergePatch(deployment, { metadata: { labels: { tier: 'front' } } });
    expect(labelled.metadata.labels).toEqual({ app: 'web', tier: 'front' });

    const annotated = applyMergePatch(deployment, { metadata: { annotations: { note: null } } });
    expect(annotated.metadata.annotations).toEqual({ keep: 'y' });

    const scaled = applyMergePatch(deployment, { spec: { replicas: 3 } });
    expect(scaled.spec.replicas).toBe(3);
    expect(scaled.spec.template).toEqual(deployment.spec.template);
  });

  it('replaces lists instead of merging them', () => {
    const patched = applyMergePatch(deployment, { spec: { template: { spec: { containers: [{ name: 'sidecar' }] } } } });
    expect(patched.spec.template.spec.containers).toEqual([{ name: 'sidecar' }]);
  });

  it('keeps the target field order and appends new fields', () => {
    const patched = applyMergePatch({ a: 1, b: 2, c: 3 }, { d: 4, b: 20 });
    expect(Object.keys(patched)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('neither modifies nor shares its inputs', () => {
    const target = structuredClone(deployment);
    const patch = { metadata: { labels: { tier: 'front' } }, spec: { extra: { nested: [1, 2] } } };
    const patchCopy = structuredClone(patch);
    const result = applyMergePatch(target, patch) as typeof deployment & { spec: { extra: { nested: number[] } } };
    expect(target).toEqual(deployment);
    expect(patch).toEqual(patchCopy);
    expect(result.spec.template).not.toBe(target.spec.template);
    expect(result.spec.extra).not.toBe(patch.spec.extra);
    result.spec.extra.nested.push(3);
    expect(patch.spec.extra.nested).toEqual([1, 2]);
  });

  it('treats __proto__ as an ordinary key', () => {
    const patch = JSON.parse('{"metadata":{"__proto__":{"polluted":true}}}') as object;
    const result = applyMergePatch({ metadata: {} }, patch) as { metadata: Record<string, unknown> };
    expect(Object.getPrototypeOf(result.metadata)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(result)).toBe('{"metadata":{"__proto__":{"polluted":true}}}');
  });

  it.each([[['c']], [null], ['bar'], [42]])('rejects a patch that is not an object: %j', (patch) => {
    const run = () => applyMergePatch({ a: 'foo' }, patch);
    expect(run).toThrow(ApiError);
    expect(run).toThrow('invalid merge patch: the patch must be a JSON object');
  });
});
