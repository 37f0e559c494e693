import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.js';
import { escapeFieldSelectorValue, parseFieldSelector } from './fields.js';

function fields(values: Record<string, string>) {
  return (field: string) => (Object.hasOwn(values, field) ? values[field] : undefined);
}

function badRequest(run: () => unknown): ApiError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return err as ApiError;
  }
  throw new Error('expected a BadRequest ApiError');
}

describe('parseFieldSelector', () => {
  it('selects everything for the empty string', () => {
    const selector = parseFieldSelector('');
    expect(selector.empty).toBe(true);
    expect(selector.terms).toEqual([]);
    expect(selector.matches(() => undefined)).toBe(true);
    expect(selector.toString()).toBe('');
  });

  it('parses what kubectl sends for `get pod x -w` and informers', () => {
    const selector = parseFieldSelector('metadata.name=web-1');
    expect(selector.terms).toEqual([{ field: 'metadata.name', operator: '=', value: 'web-1' }]);
    expect(selector.fieldValue('metadata.name')).toBe('web-1');
    expect(selector.fieldValue('metadata.namespace')).toBeUndefined();
    expect(selector.matches(fields({ 'metadata.name': 'web-1' }))).toBe(true);
    expect(selector.matches(fields({ 'metadata.name': 'web-2' }))).toBe(false);
  });

  it('accepts terms in any order (kubectl builds them from a Go map)', () => {
    const event = fields({ 'involvedObject.uid': 'u-1', 'involvedObject.name': 'web', 'involvedObject.kind': 'Pod' });
    for (const text of ['involvedObject.uid=u-1,involvedObject.name=web', 'involvedObject.name=web,involvedObject.uid=u-1']) {
      const selector = parseFieldSelector(text);
      expect(selector.matches(event)).toBe(true);
      expect(selector.fieldValue('involvedObject.uid')).toBe('u-1');
      expect(selector.toString()).toBe('involvedObject.name=web,involvedObject.uid=u-1');
    }
  });

  it('supports ==, != and counts a missing field as the empty string', () => {
    const unscheduled = parseFieldSelector('spec.nodeName=');
    expect(unscheduled.matches(fields({}))).toBe(true);
    expect(unscheduled.matches(fields({ 'spec.nodeName': 'node-1' }))).toBe(false);
    expect(unscheduled.fieldValue('spec.nodeName')).toBe('');

    const active = parseFieldSelector('status.phase!=Succeeded,status.phase!=Failed,spec.nodeName==node-1');
    expect(active.matches(fields({ 'status.phase': 'Running', 'spec.nodeName': 'node-1' }))).toBe(true);
    expect(active.matches(fields({ 'status.phase': 'Failed', 'spec.nodeName': 'node-1' }))).toBe(false);
    expect(active.matches(fields({ 'status.phase': 'Running', 'spec.nodeName': 'node-2' }))).toBe(false);
    expect(active.fieldValue('status.phase')).toBeUndefined();
    expect(active.fieldValue('spec.nodeName')).toBe('node-1');
  });

  it('unescapes \\, \\= and \\\\ in values and escapes them back', () => {
    const selector = parseFieldSelector('metadata.name=a\\,b\\=c\\\\d,spec.x=y');
    expect(selector.terms[0]).toEqual({ field: 'metadata.name', operator: '=', value: 'a,b=c\\d' });
    expect(selector.terms[1]).toEqual({ field: 'spec.x', operator: '=', value: 'y' });
    expect(selector.toString()).toBe('metadata.name=a\\,b\\=c\\\\d,spec.x=y');
    expect(escapeFieldSelectorValue('a,b=c\\d')).toBe('a\\,b\\=c\\\\d');
    expect(parseFieldSelector(selector.toString()).terms).toEqual(selector.terms);
  });

  it('skips empty terms and trims field names', () => {
    const selector = parseFieldSelector('a=1,, b = 2,');
    expect(selector.terms).toEqual([
      { field: 'a', operator: '=', value: '1' },
      { field: 'b', operator: '=', value: ' 2' },
    ]);
  });

  it.each([
    ['spec.nodeName', "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'"],
    ['a=1,b', "invalid selector: 'a=1,b'; can't understand 'b'"],
    ['=x', "invalid selector: '=x'; can't understand '=x'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: ='],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
  ])('rejects %j', (text, message) => {
    expect(badRequest(() => parseFieldSelector(text)).message).toBe(message);
  });
});
