import { PassThrough, Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { drained, readUpTo } from './relay.js';

describe('readUpTo', () => {
  it('reads a body up to the limit, then destroys it', async () => {
    const body = Readable.from([Buffer.from('abc'), Buffer.from('defgh'), Buffer.from('never read')]);
    expect((await readUpTo(body, 6)).toString()).toBe('abcdef');
    expect(body.destroyed).toBe(true);
    expect((await readUpTo(Readable.from([Buffer.from('short')]), 64)).toString()).toBe('short');
  });

  it('gives what arrived from a body that breaks off', async () => {
    const body = new PassThrough();
    body.write('partial');
    setImmediate(() => body.destroy(new Error('the backend went away')));
    expect((await readUpTo(body, 64)).toString()).toBe('partial');
  });
});

describe('drained', () => {
  it('resolves once the stream drains, or once it closes', async () => {
    const slow = new Writable({ highWaterMark: 1, write: (_chunk, _encoding, callback) => setImmediate(callback) });
    expect(slow.write('xx')).toBe(false);
    await drained(slow);
    expect(slow.writableLength).toBe(0);
    const stuck = new Writable({ highWaterMark: 1, write: () => undefined });
    stuck.write('xx');
    const waiting = drained(stuck);
    stuck.destroy();
    await waiting;
    expect(stuck.listenerCount('drain')).toBe(0);
  });
});
