import { describe, expect, it } from 'vitest';
import { NumberLiterals } from './number-literals.js';

const numberLiteralsOf = (text: string) => NumberLiterals.scan(text);

describe('NumberLiterals.scan', () => {
  it('finds nothing in a body of plain integers, strings that look like numbers and keywords', () => {
    expect(numberLiteralsOf('{"a":1,"b":-20,"c":"1.5e3","d":[true,false,null,0],"e":{"f":"x\\"1.0"}}')).toBeUndefined();
  });

  it('keeps integers written with a fraction or an exponent, and long integers, by the path of the value', () => {
    const text = '{"spec": {"replicas" : 1e3, "list": [1, 2.00, {"x": -1E2, "y": 0.5}, 2.5e-1], "k\\u002fy": 12345678901234567890}, "n": 9007199254740991}';
    const literals = numberLiteralsOf(text)!;
    expect(literals.size).toBe(5);
    expect(literals.lookup(['spec', 'replicas'], 1000)).toBe('1e3');
    expect(literals.lookup(['spec', 'list', 1], 2)).toBe('2.00');
    expect(literals.lookup(['spec', 'list', 2, 'x'], -100)).toBe('-1E2');
    // Fractions no integer field takes are left out.
    expect(literals.lookup(['spec', 'list', 2, 'y'], 0.5)).toBeUndefined();
    expect(literals.lookup(['spec', 'list', 3], 0.25)).toBeUndefined();
    expect(literals.lookup(['spec', 'k/y'], Number('12345678901234567890'))).toBe('12345678901234567890');
    // A 16-digit integer is kept too, for exact messages; a plain one is not.
    expect(literals.lookup(['n'], 9007199254740991)).toBe('9007199254740991');
    expect(literals.lookup(['spec', 'list', 0], 1)).toBeUndefined();
  });

  it('only reports a literal for the value it wrote', () => {
    const literals = numberLiteralsOf('{"replicas":1e3}')!;
    expect(literals.lookup(['replicas'], 1000)).toBe('1e3');
    expect(literals.lookup(['replicas'], 5)).toBeUndefined();
  });

  it('scans a top-level number', () => {
    expect(numberLiteralsOf('1.0')!.lookup([], 1)).toBe('1.0');
  });
});

describe('NumberLiterals.movedByJsonPatch', () => {
  it('moves the values of add and replace operations to their paths; an append matches any index', () => {
    const text = JSON.stringify([
      { op: 'test', path: '/spec/replicas', value: 1 },
      { op: 'replace', path: '/spec/replicas', value: 0 },
      { op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'b', ports: [{ containerPort: 0 }] } },
      { op: 'add', path: '/metadata/annotations/a~1b', value: 0 },
    ])
      .replace('"value":1}', '"value":1.0}')
      .replace('"value":0}', '"value":1e3}')
      .replace('"containerPort":0', '"containerPort":8e1')
      .replace('"value":0}', '"value":2.0}');
    const operations: unknown = JSON.parse(text);
    const moved = numberLiteralsOf(text)!.movedByJsonPatch(operations)!;
    expect(moved.size).toBe(3);
    expect(moved.lookup(['spec', 'replicas'], 1000)).toBe('1e3');
    expect(moved.lookup(['spec', 'template', 'spec', 'containers', 3, 'ports', 0, 'containerPort'], 80)).toBe('8e1');
    expect(moved.lookup(['metadata', 'annotations', 'a/b'], 2)).toBe('2.0');
  });
});
