import { describe, expect, it } from 'vitest';
import { scaledIntOrPercent } from './int-or-percent.js';

describe('scaledIntOrPercent', () => {
  it('takes non-negative integers as they are, also written as a string', () => {
    expect(scaledIntOrPercent(3, 10, true)).toBe(3);
    expect(scaledIntOrPercent(0, 10, false)).toBe(0);
    expect(scaledIntOrPercent('3', 10, false)).toBe(3);
  });

  it('scales a percentage of the total, rounding up or down', () => {
    expect(scaledIntOrPercent('25%', 10, true)).toBe(3);
    expect(scaledIntOrPercent('25%', 10, false)).toBe(2);
    expect(scaledIntOrPercent('5%', 10, false)).toBe(0);
    expect(scaledIntOrPercent('100%', 4, false)).toBe(4);
    expect(scaledIntOrPercent('0%', 4, true)).toBe(0);
  });

  it('has no count for anything else', () => {
    for (const value of [-1, 1.5, 'lots', '3x', ' 3', '-2', '2.5%', '%']) expect(scaledIntOrPercent(value, 10, true)).toBeUndefined();
  });
});
