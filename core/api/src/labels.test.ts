import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.js';
import {
  labelKeyErrors,
  labelSelectorFromObject,
  labelSelectorToString,
  labelValueErrors,
  MATCH_ALL_LABELS,
  MATCH_NO_LABELS,
  parseLabelSelector,
} from './labels.js';

function badRequest(run: () => unknown): ApiError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).reason).toBe('BadRequest');
    return err as ApiError;
  }
  throw new Error('expected a BadRequest ApiError');
}

describe('parseLabelSelector', () => {
  it('selects everything for the empty string (and for blanks)', () => {
    for (const text of ['', '   ']) {
      const selector = parseLabelSelector(text);
      expect(selector.empty).toBe(true);
      expect(selector.matches(undefined)).toBe(true);
      expect(selector.matches({ app: 'web' })).toBe(true);
      expect(selector.toString()).toBe('');
    }
  });

  it('matches equality in all three spellings', () => {
    for (const text of ['app=web', 'app==web', ' app = web ']) {
      const selector = parseLabelSelector(text);
      expect(selector.requirements).toEqual([{ key: 'app', operator: 'Equals', values: ['web'] }]);
      expect(selector.matches({ app: 'web', tier: 'front' })).toBe(true);
      expect(selector.matches({ app: 'db' })).toBe(false);
      expect(selector.matches({})).toBe(false);
      expect(selector.matches(undefined)).toBe(false);
    }
  });

  it('treats a missing label as "not equal" for != and notin', () => {
    const notEqual = parseLabelSelector('tier!=db');
    expect(notEqual.matches({})).toBe(true);
    expect(notEqual.matches({ tier: 'web' })).toBe(true);
    expect(notEqual.matches({ tier: 'db' })).toBe(false);

    const notIn = parseLabelSelector('env notin (prod, staging)');
    expect(notIn.matches(undefined)).toBe(true);
    expect(notIn.matches({ env: 'dev' })).toBe(true);
    expect(notIn.matches({ env: 'staging' })).toBe(false);
  });

  it('matches set membership, existence and absence', () => {
    const selector = parseLabelSelector('env in (prod,staging),tier,!canary');
    expect(selector.matches({ env: 'prod', tier: 'web' })).toBe(true);
    expect(selector.matches({ env: 'staging', tier: '' })).toBe(true);
    expect(selector.matches({ env: 'dev', tier: 'web' })).toBe(false);
    expect(selector.matches({ env: 'prod' })).toBe(false);
    expect(selector.matches({ env: 'prod', tier: 'web', canary: 'true' })).toBe(false);
  });

  it('compares integers with > and <', () => {
    const selector = parseLabelSelector('replicas>2,replicas<10');
    expect(selector.matches({ replicas: '3' })).toBe(true);
    expect(selector.matches({ replicas: '2' })).toBe(false);
    expect(selector.matches({ replicas: '10' })).toBe(false);
    expect(selector.matches({ replicas: 'many' })).toBe(false);
    expect(selector.matches({})).toBe(false);
  });

  it('reads empty values where Kubernetes does: `a=`, `a in ()`, `a in (x,)`', () => {
    expect(parseLabelSelector('a=').requirements[0]!.values).toEqual(['']);
    expect(parseLabelSelector('a=').matches({ a: '' })).toBe(true);
    expect(parseLabelSelector('a=').matches({ a: 'x' })).toBe(false);
    expect(parseLabelSelector('a in ()').requirements[0]!.values).toEqual(['']);
    expect(parseLabelSelector('a in (x,)').requirements[0]!.values).toEqual(['', 'x']);
  });

  it('accepts the keywords as values and prefixed keys', () => {
    expect(parseLabelSelector('mode=in').matches({ mode: 'in' })).toBe(true);
    expect(parseLabelSelector('app.kubernetes.io/name=web').matches({ 'app.kubernetes.io/name': 'web' })).toBe(true);
  });

  it('never mistakes Object.prototype members for labels', () => {
    expect(parseLabelSelector('constructor').matches({})).toBe(false);
    expect(parseLabelSelector('!toString').matches({})).toBe(true);
    expect(parseLabelSelector('hasOwnProperty!=x').matches({})).toBe(true);
    expect(parseLabelSelector('valueOf in (a)').matches({})).toBe(false);
  });

  it('prints the canonical form: sorted by key, sets sorted, == as =', () => {
    expect(parseLabelSelector('tier in (b, a), app==web, !canary, env notin (x), n>1, m<2, ready').toString()).toBe(
      'app=web,!canary,env notin (x),m<2,n>1,ready,tier in (a,b)',
    );
  });

  it('collects the pinned key=value pairs for indexes', () => {
    const selector = parseLabelSelector('app=web,env in (prod),tier in (a,b),zone!=x,ready');
    expect(Object.fromEntries(selector.exactMatches)).toEqual({ app: 'web', env: 'prod' });
  });

  it.each([
    ['a=b,', "found '', expected: identifier after ','"],
    ['a=b c=d', "found 'c', expected: ',' or 'end of string'"],
    [',a=b', "found ',', expected: !, identifier, or 'end of string'"],
    ['=b', "found '=', expected: !, identifier, or 'end of string'"],
    ['!', "unable to parse requirement: found '', expected: identifier after '!'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a in x', "unable to parse requirement: found 'x', expected: '('"],
    ['a in (x', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (x y)', "unable to parse requirement: found 'y', expected: ',' or ')'"],
    ['a foo b', "unable to parse requirement: found 'foo', expected: in, notin, =, ==, !=, gt, lt"],
    ['a=(b)', "unable to parse requirement: found '(', expected: identifier"],
    ['a>b', "unable to parse requirement: values: Invalid value: for 'Gt', 'Lt' operators, the value must be an integer"],
  ])('rejects %j', (text, message) => {
    expect(badRequest(() => parseLabelSelector(text)).message).toContain(message);
  });

  it('rejects invalid keys and values with the Kubernetes validation message', () => {
    expect(badRequest(() => parseLabelSelector('-app=web')).message).toMatch(
      /^unable to parse requirement: key: Invalid value: "-app": name part must consist of alphanumeric characters/,
    );
    expect(badRequest(() => parseLabelSelector('app=-web')).message).toMatch(
      /^unable to parse requirement: values\[0\]\[app\]: Invalid value: "-web": a valid label must be an empty string/,
    );
    expect(badRequest(() => parseLabelSelector(`app=${'v'.repeat(64)}`)).message).toContain('must be no more than 63 characters');
    expect(badRequest(() => parseLabelSelector('a/b/c')).message).toContain('a qualified name must consist of');
  });
});

describe('labelSelectorFromObject', () => {
  it('selects nothing when the selector is missing, everything when it is {}', () => {
    expect(labelSelectorFromObject(undefined)).toBe(MATCH_NO_LABELS);
    expect(labelSelectorFromObject(undefined).matches({ app: 'web' })).toBe(false);
    expect(labelSelectorFromObject(undefined).matches(undefined)).toBe(false);
    expect(labelSelectorFromObject(undefined).empty).toBe(false);
    expect(labelSelectorFromObject({})).toBe(MATCH_ALL_LABELS);
    expect(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).matches(undefined)).toBe(true);
  });

  it('ANDs matchLabels and matchExpressions', () => {
    const selector = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'staging'] },
        { key: 'canary', operator: 'DoesNotExist' },
        { key: 'tier', operator: 'Exists' },
        { key: 'zone', operator: 'NotIn', values: ['b'] },
      ],
    });
    expect(selector.matches({ app: 'web', env: 'prod', tier: 'x' })).toBe(true);
    expect(selector.matches({ app: 'web', env: 'prod', tier: 'x', zone: 'b' })).toBe(false);
    expect(selector.matches({ app: 'web', env: 'prod', tier: 'x', canary: '1' })).toBe(false);
    expect(selector.matches({ app: 'db', env: 'prod', tier: 'x' })).toBe(false);
    expect(Object.fromEntries(selector.exactMatches)).toEqual({ app: 'web' });
  });

  it('rejects invalid selectors', () => {
    const invalidOperator = { matchExpressions: [{ key: 'a', operator: 'Equals' as 'In' }] };
    expect(badRequest(() => labelSelectorFromObject(invalidOperator)).message).toBe('"Equals" is not a valid label selector operator');
    expect(badRequest(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).message).toContain(
      "values set can't be empty",
    );
    expect(badRequest(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).message).toContain(
      'values set must be empty',
    );
    expect(badRequest(() => labelSelectorFromObject({ matchLabels: { 'bad key': 'x' } })).message).toContain('key: Invalid value: "bad key"');
  });
});

describe('labelSelectorToString', () => {
  it('prints what a Scale status.selector carries', () => {
    expect(labelSelectorToString({ matchLabels: { app: 'web' } })).toBe('app=web');
    expect(
      labelSelectorToString({
        matchLabels: { b: '1' },
        matchExpressions: [
          { key: 'a', operator: 'In', values: ['y', 'x'] },
          { key: 'c', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('a in (x,y),b=1,!c');
    expect(labelSelectorToString({})).toBe('');
  });

  it('round-trips through parseLabelSelector', () => {
    const text = labelSelectorToString({ matchLabels: { app: 'web', tier: 'front' }, matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] });
    expect(parseLabelSelector(text).toString()).toBe(text);
  });
});

describe('label key and value syntax', () => {
  it('accepts what Kubernetes accepts', () => {
    for (const key of ['app', 'app.kubernetes.io/name', 'a', 'A_b-c.d', 'k8s.io/x', `${'p'.repeat(253)}/n`]) {
      expect(labelKeyErrors(key)).toEqual([]);
    }
    for (const value of ['', 'web', 'v1.2_3-x', 'x'.repeat(63)]) expect(labelValueErrors(value)).toEqual([]);
  });

  it('explains what is wrong', () => {
    expect(labelKeyErrors('')).toEqual(expect.arrayContaining(['name part must be non-empty']));
    expect(labelKeyErrors('/app')).toContain('prefix part must be non-empty');
    expect(labelKeyErrors('Example.com/app')[0]).toMatch(/^prefix part a lowercase RFC 1123 subdomain/);
    expect(labelKeyErrors('x'.repeat(64))).toContain('name part must be no more than 63 characters');
    expect(labelValueErrors('x'.repeat(64))).toContain('must be no more than 63 characters');
    expect(labelValueErrors('a b')).toHaveLength(1);
  });
});
