import { describe, expect, it } from 'vitest';
import { formatTokenLine, parseTokenFile } from './tokens.js';

describe('parseTokenFile', () => {
  it('reads tokens, users, uids and quoted group lists, skipping comments', () => {
    const tokens = parseTokenFile('# comment\n\nabc,alice,u1,"dev,ops"\nxyz,bob,u2\n', 'tokens.csv');
    expect(tokens.get('abc')).toEqual({ username: 'alice', uid: 'u1', groups: ['dev', 'ops'] });
    expect(tokens.get('xyz')).toEqual({ username: 'bob', uid: 'u2', groups: [] });
    expect(tokens.size).toBe(2);
  });

  it('names the file and line of a malformed entry', () => {
    expect(() => parseTokenFile('ok,alice,u1\nbroken', 'tokens.csv')).toThrow('tokens.csv:2: expected token,user,uid');
  });

  it('rejects duplicate tokens', () => {
    expect(() => parseTokenFile('t,a,1\nt,b,2', 'f')).toThrow('f:2: duplicate token');
  });

  it('round-trips what it writes', () => {
    const line = formatTokenLine('tok', { username: 'admin', uid: 'admin', groups: ['system:masters', 'x'] });
    expect(parseTokenFile(line, 'f').get('tok')).toEqual({ username: 'admin', uid: 'admin', groups: ['system:masters', 'x'] });
  });
});
