import { describe, expect, it } from 'vitest';
import { NumberLiterals } from './number-literals.js';

describe('NumberLiterals', () => {
  it('finds nothing in plain integers, fractions no integer field takes, strings that look like numbers and keywords', () => {
    expect(NumberLiterals.scan('{"a":1,"b":-20,"c":"1.5e3","d":[true,false,null,0,0.5,-2.5e-1],"e":{"f":"x\\"1.0"}}')).toBeUndefined();
  });

  it('finds integers written with a fraction or an exponent, and long integers, by the path of the value', () => {
    const text = '{"spec": {"replicas" : 1e3, "list": [1, 2.00, {"x": -1E2, "y": 0.5}, 2.5e-1], "k\\u002fy": 12345678901234567890}, "n": 9007199254740991}';
    const literals = NumberLiterals.scan(text)!;
    expect(literals.mayHave(1000)).toBe(true);
    expect(literals.mayHave(1)).toBe(false);
    expect(
      literals.resolve([
        { path: ['spec', 'replicas'], value: 1000 },
        { path: ['spec', 'list', 1], value: 2 },
        { path: ['spec', 'list', 2, 'x'], value: -100 },
        { path: ['spec', 'k/y'], value: Number('12345678901234567890') },
        // A 16-digit integer is kept too, for exact messages; a plain one is not.
        { path: ['n'], value: 9007199254740991 },
        { path: ['spec', 'list', 0], value: 1 },
        { path: ['spec', 'list', 2, 'y'], value: 0.5 },
        { path: ['spec', 'missing'], value: 1000 },
      ]),
    ).toEqual(['1e3', '2.00', '-1E2', '12345678901234567890', '9007199254740991', undefined, '0.5', undefined]);
  });

  it('only reports a literal for the value it wrote', () => {
    const literals = NumberLiterals.scan('{"replicas":1e3}')!;
    expect(literals.lookup(['replicas'], 1000)).toBe('1e3');
    expect(literals.lookup(['replicas'], 5)).toBeUndefined();
  });

  it('finds a top-level number, and one in a top-level array', () => {
    expect(NumberLiterals.scan('1.0')!.lookup([], 1)).toBe('1.0');
    expect(NumberLiterals.scan('[1, [2, 3e0]]')!.lookup([1, 1], 3)).toBe('3e0');
  });

  it('follows a JSON patch: values land at the latest add or replace of their path; an append matches any index', () => {
    const text = [
      '[{"op":"test","path":"/spec/replicas","value":1.0}',
      '{"op":"replace","path":"/spec/replicas","value":1e3}',
      '{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"b","ports":[{"containerPort":8e1}]}}',
      '{"op":"add","path":"/metadata/annotations/a~1b","value":2.0}',
      '{"op":"replace","path":"/spec/minReadySeconds","value":5e0}',
      '{"op":"replace","path":"/spec/minReadySeconds","value":5}]',
    ].join(',');
    const moved = NumberLiterals.scan(text)!.movedByJsonPatch(JSON.parse(text))!;
    expect(
      moved.resolve([
        { path: ['spec', 'replicas'], value: 1000 },
        { path: ['spec', 'template', 'spec', 'containers', 3, 'ports', 0, 'containerPort'], value: 80 },
        { path: ['metadata', 'annotations', 'a/b'], value: 2 },
        { path: ['spec', 'minReadySeconds'], value: 5 },
      ]),
    ).toEqual(['1e3', '8e1', '2.0', undefined]);
  });

  it('scans a 3 MiB body of literals in nested arrays without building anything for them', () => {
    const one = `${'['.repeat(20)}1e0${']'.repeat(20)}`;
    const text = `{"spec":{"replicas":1},"x":[${Array.from({ length: 70_000 }, () => one).join(',')}]}`;
    const literals = NumberLiterals.scan(text)!;
    expect(literals.mayHave(1)).toBe(true);
    expect(literals.resolve([{ path: ['spec', 'replicas'], value: 1 }])).toEqual([undefined]);
    expect(literals.lookup(['x', 69_999, ...Array<number>(19).fill(0), 0], 1)).toBe('1e0');
  });
});
