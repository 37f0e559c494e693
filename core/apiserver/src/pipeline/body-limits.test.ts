import { describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH } from '@skiff/api';
import { decodeBody } from './decode-body.js';

const failure = (body: unknown, contentType = 'application/json') => {
  try {
    decodeBody(typeof body === 'string' ? Buffer.from(body) : body, contentType);
  } catch (err) {
    return { status: (err as { status: number }).status, message: (err as Error).message };
  }
  return undefined;
};

const jsonNested = (levels: number) => '{"a":'.repeat(levels - 1) + '[]' + '}'.repeat(levels - 1);

describe('request body limits', () => {
  it(`accepts ${MAX_NESTING_DEPTH} levels and refuses one more, in JSON, at any depth`, () => {
    expect(failure(jsonNested(MAX_NESTING_DEPTH))).toBeUndefined();
    for (const levels of [MAX_NESTING_DEPTH + 1, 1_000, 10_000, 100_000, 1_000_000]) {
      expect(failure(jsonNested(levels)), String(levels)).toEqual({
        status: 400,
        message: `the request body nests objects or arrays more than ${MAX_NESTING_DEPTH} levels deep; Skiff refuses deeper bodies`,
      });
    }
    expect(failure('['.repeat(100_000))).toMatchObject({ status: 400 });
  });

  it('does not count brackets inside strings', () => {
    expect(failure(JSON.stringify({ note: '['.repeat(10_000), quoted: '"\\[{' }))).toBeUndefined();
  });

  it('refuses deep YAML in block, compact-sequence and flow style before parsing it', () => {
    const block = (levels: number) => Array.from({ length: levels }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ` 1\n`;
    expect(failure(block(MAX_NESTING_DEPTH), 'application/yaml')).toBeUndefined();
    expect(failure(block(MAX_NESTING_DEPTH + 1), 'application/yaml')).toMatchObject({ status: 400, message: expect.stringContaining('levels deep') });
    for (const levels of [1_000, 10_000, 100_000]) {
      expect(failure(`${'- '.repeat(levels)}x\n`, 'application/yaml'), `sequence ${levels}`).toMatchObject({ status: 400 });
      expect(failure(`a: ${'['.repeat(levels)}${']'.repeat(levels)}\n`, 'application/yaml'), `flow ${levels}`).toMatchObject({ status: 400 });
      expect(failure(`${'{a: '.repeat(levels)}1${'}'.repeat(levels)}`, 'application/apply-patch+yaml'), `flow map ${levels}`).toMatchObject({ status: 400 });
    }
  });

  it('ignores brackets in YAML scalars, block scalars and comments', () => {
    const yaml = [
      'metadata:',
      '  name: x  # [[[[',
      '  annotations:',
      `    note: a${'['.repeat(500)}`,
      '    script: |',
      `      ${'['.repeat(500)}`,
      `      ${'{'.repeat(500)}`,
      'spec: {a: [1, 2]}',
    ].join('\n');
    expect(failure(yaml, 'application/yaml')).toBeUndefined();
  });

  it('measures nesting made of YAML aliases after parsing', () => {
    const lines = ['a0: &a0 []'];
    for (let i = 1; i <= MAX_NESTING_DEPTH + 5; i++) lines.push(`a${i}: &a${i} [*a${i - 1}]`);
    expect(failure(lines.join('\n'), 'application/yaml')).toMatchObject({ status: 400 });
  });

  it('refuses invalid UTF-8 and lone surrogates, naming where', () => {
    expect(failure(Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]))).toEqual({
      status: 400,
      message: 'the request body is not valid UTF-8',
    });
    expect(failure('{"metadata":{"labels":{"a":"x\\ud800"}}}')).toEqual({
      status: 400,
      message: 'the request body holds a string that is not valid Unicode (a lone surrogate) at metadata.labels.a',
    });
    expect(failure('{"metadata":{"annotations":{"\\udc00":"x"}}}')).toMatchObject({ status: 400, message: expect.stringContaining('at metadata.annotations') });
    expect(failure('{"items":[{"a":"\\ud83d\\ude00"}]}')).toBeUndefined();
  });

  it('checks objects from the loopback transport too', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 5_000; i++) deep = { a: deep };
    expect(failure({ metadata: { name: 'x' }, spec: deep })).toMatchObject({ status: 400, message: expect.stringContaining('(at spec.a.a.a') });
  });
});
