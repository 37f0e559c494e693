import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { applyJsonPatch } from './json-patch.js';

function failure(run: () => unknown): ApiError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('applyJsonPatch', () => {
  // RFC 6902, Appendix A.
  it.each([
    ['A.1 add an object member', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { baz: 'qux', foo: 'bar' }],
    ['A.2 add an array element', { foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }], { foo: ['bar', 'qux', 'baz'] }],
    ['A.3 remove an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    ['A.4 remove an array element', { foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { foo: ['bar', 'baz'] }],
    ['A.5 replace a value', { baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { baz: 'boo', foo: 'bar' }],
    [
      'A.6 move a value',
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      'A.7 move an array element',
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      'A.8 test a value (success)',
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    ['A.10 add a nested member object', { foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }], { foo: 'bar', child: { grandchild: {} } }],
    ['A.11 ignore unrecognised members', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }], { foo: 'bar', baz: 'qux' }],
    ['A.14 ~ escape ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { '/': 9, '~1': 10 }],
    ['A.16 add an array value', { foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }], { foo: ['bar', ['abc', 'def']] }],
    ['copy a value', { a: { b: [1] } }, [{ op: 'copy', from: '/a', path: '/c' }], { a: { b: [1] }, c: { b: [1] } }],
    ['replace the whole document', { a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }], { b: 2 }],
    ['add at the end of an array by index', { a: [1] }, [{ op: 'add', path: '/a/1', value: 2 }], { a: [1, 2] }],
    ['test objects in any key order', { a: { x: 1, y: [2] } }, [{ op: 'test', path: '/a', value: { y: [2], x: 1 } }], { a: { x: 1, y: [2] } }],
  ])('RFC 6902 %s', (_name, target, operations, result) => {
    expect(applyJsonPatch(target, operations)).toEqual(result);
  });

  it('applies what kubectl rollout undo sends', () => {
    const deployment = {
      metadata: { name: 'web', annotations: { 'deployment.kubernetes.io/revision': '2' } },
      spec: { replicas: 2, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } } },
    };
    const previous = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.24' }] } };
    const undone = applyJsonPatch(deployment, [
      { op: 'replace', path: '/spec/template', value: previous },
      { op: 'replace', path: '/metadata/annotations', value: { 'deployment.kubernetes.io/revision': '1' } },
    ]);
    expect(undone.spec.template).toEqual(previous);
    expect(undone.spec.replicas).toBe(2);
    expect(undone.metadata.annotations).toEqual({ 'deployment.kubernetes.io/revision': '1' });
  });

  it('escapes / and ~ in pointer tokens', () => {
    const labelled = applyJsonPatch({ metadata: { labels: {} } }, [{ op: 'add', path: '/metadata/labels/app.kubernetes.io~1name', value: 'web' }]);
    expect(labelled.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'web' });
    expect(applyJsonPatch({ 'a~b': 1 }, [{ op: 'remove', path: '/a~0b' }])).toEqual({});
  });

  it('neither modifies nor shares its inputs, and applies nothing when an operation fails', () => {
    const target = { list: [1, 2], nested: { x: 1 } };
    const value = { deep: [1] };
    const result = applyJsonPatch(target, [{ op: 'add', path: '/v', value }]) as typeof target & { v: typeof value };
    expect(target).toEqual({ list: [1, 2], nested: { x: 1 } });
    expect(result.v).not.toBe(value);
    expect(result.nested).not.toBe(target.nested);

    expect(() =>
      applyJsonPatch(target, [
        { op: 'remove', path: '/list/0' },
        { op: 'test', path: '/nested/x', value: 2 },
      ]),
    ).toThrow(ApiError);
    expect(target.list).toEqual([1, 2]);
  });

  it('answers a failed test like the API server: 422 Invalid naming the operation and path', () => {
    const err = failure(() => applyJsonPatch({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]));
    expect(err.status).toBe(422);
    expect(err.reason).toBe('Invalid');
    expect(err.message).toBe('json patch test operation 0 does not apply: the value at "/baz" is not the expected value');
    expect(err.details?.causes).toEqual([{ type: 'FieldValueInvalid', field: '/baz', message: err.message }]);
    // A.15: strings and numbers differ.
    expect(failure(() => applyJsonPatch({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }])).status).toBe(422);
  });

  it.each([
    [
      'A.12 add to a missing parent',
      { foo: 'bar' },
      { op: 'add', path: '/baz/bat', value: 'qux' },
      'json patch add operation 0 does not apply: the parent of "/baz/bat" does not exist',
    ],
    ['replace a missing member', { a: 1 }, { op: 'replace', path: '/b', value: 2 }, 'json patch replace operation 0 does not apply: "/b" does not exist'],
    ['remove a missing member', { a: 1 }, { op: 'remove', path: '/b' }, 'json patch remove operation 0 does not apply: "/b" does not exist'],
    [
      'remove past the end',
      { a: [1] },
      { op: 'remove', path: '/a/1' },
      'json patch remove operation 0 does not apply: "/a/1" is not a valid index into an array of 1',
    ],
    ['add past the end', { a: [1] }, { op: 'add', path: '/a/2', value: 0 }, '"/a/2" is not a valid index into an array of 1'],
    ['a leading-zero index', { a: [1, 2] }, { op: 'replace', path: '/a/01', value: 0 }, '"/a/01" is not a valid index'],
    ['remove with -', { a: [1] }, { op: 'remove', path: '/a/-' }, '"/a/-" is not a valid index'],
    ['remove the document', { a: 1 }, { op: 'remove', path: '' }, 'the whole document cannot be removed'],
    ['move into its own child', { a: { b: 1 } }, { op: 'move', from: '/a', path: '/a/c' }, '"/a" cannot be moved into its own child "/a/c"'],
    ['move from a missing path', { a: 1 }, { op: 'move', from: '/x', path: '/y' }, 'json patch move operation 0 does not apply: "/x" does not exist'],
    ['copy from a missing path', { a: 1 }, { op: 'copy', from: '/x', path: '/y' }, '"/x" does not exist'],
    ['test a missing path', { a: 1 }, { op: 'test', path: '/x', value: 1 }, '"/x" does not exist'],
  ])('422 when the patch does not apply: %s', (_name, target, operation, message) => {
    const err = failure(() => applyJsonPatch(target, [operation]));
    expect(err.status).toBe(422);
    expect(err.message).toContain(message);
  });

  it.each([
    ['not an array', { op: 'add' }, 'invalid json patch: the patch must be a JSON array of operations'],
    ['an operation that is not an object', ['add'], 'invalid json patch: operation 0 is not an object'],
    ['an unknown op', [{ op: 'merge', path: '/a' }], 'invalid json patch: operation 0 has unknown op "merge"'],
    ['a missing op', [{ path: '/a' }], 'invalid json patch: operation 0 has unknown op null'],
    ['a missing path', [{ op: 'remove' }], 'invalid json patch: operation 0 needs a string "path"'],
    ['a missing value', [{ op: 'add', path: '/a' }], 'invalid json patch: add operation 0 needs a "value"'],
    ['a missing from', [{ op: 'move', path: '/a' }], 'invalid json patch: operation 0 needs a string "from"'],
    ['a relative pointer', [{ op: 'remove', path: 'a' }], 'invalid json patch: operation 0: JSON pointer "a" must be empty or start with "/"'],
    ['a bad ~ escape', [{ op: 'remove', path: '/a~2' }], 'invalid json patch: operation 0: JSON pointer "/a~2" has a "~" not followed by 0 or 1'],
  ])('400 when the patch cannot be decoded: %s', (_name, operations, message) => {
    const err = failure(() => applyJsonPatch({ a: 1 }, operations));
    expect(err.status).toBe(400);
    expect(err.message).toBe(message);
  });

  it('accepts a null value', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/a', value: null }])).toEqual({ a: null });
  });
});
