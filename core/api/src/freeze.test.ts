import { describe, expect, it } from 'vitest';
import { deepFreeze } from './freeze.js';

describe('deepFreeze', () => {
  it('freezes every object it reaches, arrays included, and returns the value', () => {
    const value = { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80 }] }] }, labels: { a: 'b' } };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value.spec.containers[0]!.ports[0])).toBe(true);
    expect(Object.isFrozen(value.spec.containers)).toBe(true);
    expect(Object.isFrozen(value.labels)).toBe(true);
  });

  it('leaves primitives alone and copes with deep nesting', () => {
    expect(deepFreeze(3)).toBe(3);
    expect(deepFreeze(null)).toBeNull();
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 100_000; i++) deep = (deep.next = {}) as Record<string, unknown>;
    deepFreeze(root);
    expect(Object.isFrozen(deep)).toBe(true);
  });
});
