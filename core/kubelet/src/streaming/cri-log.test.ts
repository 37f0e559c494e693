import { describe, expect, it } from 'vitest';
import { LogLineAssembler, MAX_HELD_LINE_BYTES, parseCriLogLine, parseTimestamp, type CriLogEntry, type LogLine } from './cri-log.js';

const parse = (line: string) => parseCriLogLine(Buffer.from(line));
const text = (lines: LogLine[]) => lines.map((line) => `${line.stream}:${line.content.toString()}`);

function entry(stream: 'stdout' | 'stderr', partial: boolean, content: string, second = 0): CriLogEntry {
  const stamp = `2026-01-01T00:00:${String(second).padStart(2, '0')}Z`;
  return { ...parseTimestamp(stamp)!, stream, partial, content: Buffer.from(content) };
}

describe('parseCriLogLine', () => {
  it('reads a full stdout line and a partial stderr line', () => {
    expect(parse('2026-03-01T10:00:00.123456789Z stdout F hello world')).toMatchObject({
      timestamp: '2026-03-01T10:00:00.123456789Z',
      stream: 'stdout',
      partial: false,
    });
    expect(parse('2026-03-01T10:00:00.123456789Z stdout F hello world')!.content.toString()).toBe('hello world');
    const partial = parse('2026-03-01T10:00:00Z stderr P  two  spaces ')!;
    expect(partial).toMatchObject({ stream: 'stderr', partial: true });
    expect(partial.content.toString()).toBe(' two  spaces ');
  });

  it('normalises timestamps to nine digits, keeping their zone, and orders them by instant', () => {
    const a = parse('2026-03-01T10:00:00.5+01:00 stdout F a')!;
    const b = parse('2026-03-01T09:00:00.500001Z stdout F b')!;
    expect(a.timestamp).toBe('2026-03-01T10:00:00.500000000+01:00');
    expect(a.time).toBe(Date.parse('2026-03-01T09:00:00.5Z'));
    expect(b.time).toBeGreaterThan(a.time);
  });

  it('reads empty lines with or without the space after the tag, and tags with more fields', () => {
    expect(parse('2026-03-01T10:00:00Z stdout F')!.content.length).toBe(0);
    expect(parse('2026-03-01T10:00:00Z stdout F ')!.content.length).toBe(0);
    expect(parse('2026-03-01T10:00:00Z stdout P:x y')).toMatchObject({ partial: true });
  });

  it('skips what is not an entry', () => {
    for (const line of [
      '',
      'hello',
      '2026-03-01T10:00:00Z stdout',
      '2026-03-01T10:00:00Z stdin F text',
      'yesterday stdout F text',
      '2026-13-45T10:00:00Z stdout F text',
      '2026-03-01T10:00:00Z stdout  text',
    ])
      expect(parse(line), line).toBeUndefined();
  });
});

describe('LogLineAssembler', () => {
  it("joins each stream's partial entries into lines, in the order lines end", () => {
    const assembler = new LogLineAssembler();
    const out = [entry('stdout', true, 'hel', 1), entry('stderr', false, 'oops', 2), entry('stdout', true, 'lo ', 3), entry('stdout', false, 'world', 4)]
      .map((e) => assembler.push(e))
      .filter((line): line is LogLine => line !== undefined);
    expect(text(out)).toEqual(['stderr:oops\n', 'stdout:hello world\n']);
    // A line carries the time its first part was written.
    expect(out[1]!.timestamp).toBe('2026-01-01T00:00:01.000000000Z');
  });

  it('hands out lines still open when flushed, without a newline', () => {
    const assembler = new LogLineAssembler();
    assembler.push(entry('stderr', true, 'b', 2));
    assembler.push(entry('stdout', true, 'a', 1));
    expect(text(assembler.flush())).toEqual(['stdout:a', 'stderr:b']);
    expect(assembler.flush()).toEqual([]);
  });

  it('does not hold a line without end forever: past the limit the part so far goes out and the rest continues it', () => {
    const assembler = new LogLineAssembler();
    const big = 'x'.repeat(MAX_HELD_LINE_BYTES);
    const first = assembler.push(entry('stdout', true, big, 1));
    expect(first).toMatchObject({ continuation: false });
    expect(first!.content.length).toBe(MAX_HELD_LINE_BYTES);
    const rest = assembler.push(entry('stdout', false, 'end', 2));
    expect(rest).toMatchObject({ continuation: true, timestamp: '2026-01-01T00:00:01.000000000Z' });
    expect(rest!.content.toString()).toBe('end\n');
  });
});
