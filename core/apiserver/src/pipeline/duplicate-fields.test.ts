import { LineCounter, parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { duplicateFieldErrors, duplicateJsonFields, duplicateYamlKeys, strictWarnings } from './duplicate-fields.js';

function yamlRepeats(text: string) {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { uniqueKeys: false, lineCounter });
  return duplicateYamlKeys(document.contents, lineCounter);
}

describe('duplicateJsonFields', () => {
  it('names keys repeated within one object by their path, at any depth, and not across objects or in values', () => {
    const paths = (text: string) => duplicateJsonFields(text).map((field) => field.path);
    expect(paths('{"a":1,"b":{"c":1,"c":2},"a":3,"list":[{"x":1},{"x":2}],"s":"a\\":"}')).toEqual(['b.c', 'a']);
    expect(paths('{"k":"k","v":["k","k"]}')).toEqual([]);
    expect(paths('{"\\u0061":1,"a":2}')).toEqual(['a']);
    expect(paths('{"spec":{"containers":[{"name":"a"},{"name":"b","name":"c"}],"replicas":1,"replicas":2}}')).toEqual([
      'spec.containers[1].name',
      'spec.replicas',
    ]);
    expect(paths('{"a":[[1,2],[{"x":1,"x":2}]]}')).toEqual(['a[1][0].x']);
  });

  it('counts the line of the repeated key’s value, as Go’s YAML decoder reads JSON text', () => {
    expect(duplicateJsonFields('{\n  "a": 1,\n  "a":\n    2\n}')).toEqual([{ path: 'a', key: '"a"', line: 4 }]);
  });
});

describe('duplicateYamlKeys', () => {
  it('reports each repeat with the line of its value, a value’s own repeats before its key’s', () => {
    const text = ['', 'apiVersion: v1', 'spec:', '  unknown: uk1', '  foo: foo1', '  foo: foo2', 'spec:', '  a: 1', '  a: 2', '1: x', '1: y'].join('\n');
    expect(yamlRepeats(text)).toEqual([
      { path: 'spec.foo', key: '"foo"', line: 6 },
      { path: 'spec.a', key: '"a"', line: 9 },
      { path: 'spec', key: '"spec"', line: 8 },
      { path: '1', key: '1', line: 11 },
    ]);
  });
});

describe('strict decoding errors of repeats', () => {
  it('reads like Go’s JSON decoder (one error per path) or YAML decoder (one error, a line per repeat)', () => {
    const fields = [
      { path: 'spec.replicas', key: '"replicas"', line: 3 },
      { path: 'spec.replicas', key: '"replicas"', line: 4 },
      { path: 'spec.foo', key: '"foo"', line: 9 },
    ];
    expect(duplicateFieldErrors({ decoder: 'json', fields })).toEqual(['duplicate field "spec.replicas"', 'duplicate field "spec.foo"']);
    const yaml = duplicateFieldErrors({ decoder: 'yaml', fields });
    expect(yaml).toEqual([
      'yaml: unmarshal errors:\n  line 3: key "replicas" already set in map\n  line 4: key "replicas" already set in map\n  line 9: key "foo" already set in map',
    ]);
    expect(strictWarnings([...yaml, 'unknown field "spec.x"'])).toEqual([
      'line 3: key "replicas" already set in map',
      'line 4: key "replicas" already set in map',
      'line 9: key "foo" already set in map',
      'unknown field "spec.x"',
    ]);
  });
});
