import { describe, expect, it } from 'vitest';
import { expand, lookupIn } from './expansion.js';

const vars = lookupIn(
  new Map([
    ['VAR_A', 'A'],
    ['VAR_B', 'B'],
    ['EMPTY', ''],
  ]),
);

describe('$(VAR) expansion', () => {
  it.each([
    ['$(VAR_A)', 'A'],
    ['___$(VAR_A)___', '___A___'],
    ['$(VAR_A)-$(VAR_B)', 'A-B'],
    ['$(EMPTY)x', 'x'],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$$(VAR_A)', '$(VAR_A)'],
    ['$$$(VAR_A)', '$A'],
    ['$$', '$'],
    ['$', '$'],
    ['x$', 'x$'],
    ['$VAR_A', '$VAR_A'],
    ['$(VAR_A', '$(VAR_A'],
    ['$()', '$()'],
    ['$(VAR_A)$(VAR_A', 'A$(VAR_A'],
    ['no variables', 'no variables'],
  ])('%s → %s', (input, output) => {
    expect(expand(input, vars)).toBe(output);
  });

  it('looks names up in the first map that has them', () => {
    const lookup = lookupIn(
      new Map([['X', 'first']]),
      new Map([
        ['X', 'second'],
        ['Y', 'y'],
      ]),
    );
    expect(expand('$(X) $(Y)', lookup)).toBe('first y');
  });
});
