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

describe('applyJsonPatch budgets', () => {
  const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

  it('takes 10,000 operations and refuses 10,001 with a 413 before applying any', () => {
    const test = { op: 'test', path: '/a', value: 1 };
    expect(
      applyJsonPatch(
        { a: 1 },
        Array.from({ length: 10_000 }, () => test),
      ),
    ).toEqual({ a: 1 });
    const err = failure(() =>
      applyJsonPatch(
        { a: 1 },
        Array.from({ length: 10_001 }, () => ({ op: 'remove', path: '/missing' })),
      ),
    );
    expect(err.status).toBe(413);
    expect(err.reason).toBe('RequestEntityTooLarge');
    expect(err.message).toBe('Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
  });

  it('stops a list copied into itself at the first copy past the copy budget, before making it', () => {
    // Each copy appends the whole list to itself: 2^22 items unless stopped.
    const grow = Array.from({ length: 22 }, () => ({ op: 'copy', from: '/xs', path: '/xs/-' }));
    const err = failure(() => applyJsonPatch({ xs: ['abc'] }, grow));
    expect(err.status).toBe(422);
    // The list is 3 · 2^n + … bytes before copy n: copy 18 would take the bytes copied past 3 MiB.
    expect(err.message).toBe('json patch copy operation 18 does not apply: copying "/xs" would take the bytes copied by this patch past the limit of 3145728');
    expect(err.details?.causes?.[0]).toMatchObject({ type: 'FieldValueInvalid', field: '/xs/-' });
  });

  it('counts every copy against one budget, even when the copies are removed again', () => {
    const value = 'x'.repeat(1000);
    const cycle = [
      { op: 'copy', from: '/big', path: '/copy' },
      { op: 'remove', path: '/copy' },
    ];
    const patch = Array.from({ length: 10 }, () => cycle).flat();
    expect(applyJsonPatch({ big: value }, patch, { maxCopyBytes: 10 * size(value) })).toEqual({ big: value });
    const err = failure(() => applyJsonPatch({ big: value }, patch, { maxCopyBytes: 10 * size(value) - 1 }));
    expect(err.message).toContain('copy operation 18 does not apply');
  });

  it('keeps the document size exact through every operation, so the limit is met to the byte', () => {
    const target = { metadata: { name: 'a', labels: { app: 'web' } }, list: [1, 2, 3], text: 'é"\n' };
    const patch = [
      { op: 'add', path: '/metadata/labels/tier', value: 'front' },
      { op: 'add', path: '/list/1', value: { deep: ['x', 'y'] } },
      { op: 'add', path: '/list/-', value: 'end' },
      { op: 'replace', path: '/text', value: 'snow ☃' },
      { op: 'add', path: '/metadata/labels/app', value: 'replaced by add' },
      { op: 'copy', from: '/metadata/labels', path: '/labelsCopy' },
      { op: 'move', from: '/list/0', path: '/moved' },
      { op: 'move', from: '/moved', path: '/list/0' },
      { op: 'remove', path: '/list/2' },
      { op: 'move', from: '/labelsCopy', path: '/metadata/labels' },
    ];
    const result = applyJsonPatch(target, patch);
    // The largest the document gets on the way: the limit that this patch just fits.
    const largest = Math.max(...patch.map((_op, i) => size(applyJsonPatch(target, patch.slice(0, i + 1)))));
    expect(largest).toBeGreaterThan(size(result));
    expect(applyJsonPatch(target, patch, { maxDocumentBytes: largest })).toEqual(result);
    expect(failure(() => applyJsonPatch(target, patch, { maxDocumentBytes: largest - 1 })).status).toBe(413);
  });

  it('stops the operation that takes the document past its limit with a 413 naming it; shrinking gives room back', () => {
    const big = 'x'.repeat(100);
    const limits = { maxDocumentBytes: 250 };
    const err = failure(() =>
      applyJsonPatch(
        {},
        [
          { op: 'add', path: '/a', value: big },
          { op: 'add', path: '/b', value: big },
          { op: 'add', path: '/c', value: big },
        ],
        limits,
      ),
    );
    expect(err.status).toBe(413);
    expect(err.message).toBe('Request entity too large: json patch add operation 2 at "/c" takes the object past the limit of 250 bytes');
    const swapped = applyJsonPatch(
      {},
      [
        { op: 'add', path: '/a', value: big },
        { op: 'add', path: '/b', value: big },
        { op: 'remove', path: '/a' },
        { op: 'replace', path: '/b', value: 'small' },
        { op: 'add', path: '/c', value: big },
      ],
      limits,
    );
    expect(swapped).toEqual({ b: 'small', c: big });
  });

  it('lets a document stored larger than the limit be patched as long as it does not grow', () => {
    const stored = { data: 'x'.repeat(500) };
    expect(applyJsonPatch(stored, [{ op: 'replace', path: '/data', value: 'y'.repeat(500) }], { maxDocumentBytes: 100 })).toEqual({ data: 'y'.repeat(500) });
    expect(failure(() => applyJsonPatch(stored, [{ op: 'add', path: '/more', value: 1 }], { maxDocumentBytes: 100 })).status).toBe(413);
  });

  it('refuses a copy that would nest past the depth limit, and a result that moves did', () => {
    const chain = (levels: number): unknown => (levels === 0 ? 1 : { a: chain(levels - 1) });
    // Copying the chain into its own deepest member doubles its depth.
    const deepCopy = failure(() => applyJsonPatch({ c: chain(60) }, [{ op: 'copy', from: '/c', path: `/c${'/a'.repeat(59)}/b` }]));
    expect(deepCopy.status).toBe(422);
    expect(deepCopy.message).toContain('more than 100 levels deep');
    const deepMove = failure(() => applyJsonPatch({ c: chain(60), d: chain(60) }, [{ op: 'move', from: '/d', path: `/c${'/a'.repeat(59)}/b` }]));
    expect(deepMove.status).toBe(422);
    expect(deepMove.message).toBe('the patched object nests objects or arrays more than 100 levels deep');
    expect(applyJsonPatch({ c: chain(40) }, [{ op: 'copy', from: '/c', path: `/c${'/a'.repeat(39)}/b` }])).toBeTruthy();
  });
});
