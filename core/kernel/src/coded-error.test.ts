import { describe, expect, it } from 'vitest';
import { codedError, formatMessage } from './coded-error.js';

const TABLE = Object.freeze({ SKIFF_ERR_TEST_NOPE: 'plugin "{name}" cannot {verb}' } as const);
class TestError extends codedError('TestError', TABLE) {}

describe('codedError', () => {
  it('builds a named error with its code, message and cause', () => {
    const cause = new Error('disk full');
    const err = new TestError('SKIFF_ERR_TEST_NOPE', { name: 'x', verb: 'start' }, { cause });
    expect(err).toBeInstanceOf(TestError);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name: 'TestError', code: 'SKIFF_ERR_TEST_NOPE', message: 'plugin "x" cannot start', cause });
  });

  it('leaves unknown placeholders visible and formats numbers', () => {
    expect(formatMessage('{a} of {b}', { a: 3 })).toBe('3 of {b}');
  });
});
