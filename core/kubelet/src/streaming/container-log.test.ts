import { appendFile, mkdtemp, open, rename, rm, truncate, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor, type ContainerLogOptions } from '@skiff/kernel';
import { readContainerLog, sinceOf, type ContainerLogSource } from './container-log.js';
import { LogLineAssembler, parseCriLogLine } from './cri-log.js';
import { tailEntries } from './log-file.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-logs-'));
  path = join(dir, '0.log');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const FAST = { pollMs: 20, statusMs: 20 };

/** A CRI log line written at second `second` past 10:00 UTC. */
const at = (second: number, stream: 'stdout' | 'stderr', tag: 'P' | 'F', content: string) =>
  `2026-03-01T10:${String(Math.floor(second / 60)).padStart(2, '0')}:${String(second % 60).padStart(2, '0')}.000000001Z ${stream} ${tag} ${content}\n`;

/** A container whose exit the test decides. */
function container(): ContainerLogSource & { exit(): void } {
  let exited = false;
  return { path, exited: async () => exited, exit: () => void (exited = true) };
}

async function read(options: ContainerLogOptions = {}, source: ContainerLogSource = container(), now?: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of readContainerLog(source, options, new AbortController().signal, FAST, now)) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

/** Collects a followed log as it comes. */
function follow(source: ContainerLogSource, options: ContainerLogOptions = {}, signal = new AbortController().signal) {
  const state = { text: '', ended: false };
  const done = (async () => {
    for await (const chunk of readContainerLog(source, { ...options, follow: true }, signal, FAST)) state.text += Buffer.from(chunk).toString();
    state.ended = true;
  })();
  return Object.assign(state, { done });
}

describe('reading a container log', () => {
  it('gives both streams in order, joins partial entries and skips malformed lines', async () => {
    await writeFile(
      path,
      [
        at(0, 'stdout', 'F', 'one'),
        at(1, 'stdout', 'P', 'tw'),
        at(2, 'stderr', 'F', 'warning'),
        'this is not a log entry\n',
        at(3, 'stdout', 'F', 'o'),
        at(4, 'stdout', 'F', ''),
        at(5, 'stderr', 'P', 'no end yet'),
      ].join(''),
    );
    expect(await read()).toBe('one\nwarning\ntwo\n\nno end yet');
  });

  it('reads as empty when the runtime has not written the file yet', async () => {
    expect(await read()).toBe('');
  });

  it('prefixes each line with its timestamp, nine fractional digits', async () => {
    await writeFile(path, at(0, 'stdout', 'P', 'a') + at(1, 'stdout', 'F', 'b') + at(2, 'stderr', 'F', 'c'));
    expect(await read({ timestamps: true })).toBe('2026-03-01T10:00:00.000000001Z ab\n2026-03-01T10:00:02.000000001Z c\n');
  });

  it('keeps lines from sinceTime or sinceSeconds on, whichever is later', async () => {
    await writeFile(path, [0, 10, 20, 30].map((second) => at(second, 'stdout', 'F', `s${second}`)).join(''));
    expect(await read({ sinceTime: '2026-03-01T10:00:10Z' })).toBe('s10\ns20\ns30\n');
    const now = Date.parse('2026-03-01T10:00:35Z');
    expect(await read({ sinceSeconds: 20 }, container(), now)).toBe('s20\ns30\n');
    expect(sinceOf({ sinceSeconds: 20, sinceTime: '2026-03-01T10:00:25Z' }, now)).toBe(Date.parse('2026-03-01T10:00:25Z'));
    expect(sinceOf({ sinceSeconds: 5, sinceTime: '2026-03-01T10:00:25Z' }, now)).toBe(now - 5000);
  });

  it('stops after limitBytes, counting the timestamps it prints', async () => {
    await writeFile(path, at(0, 'stdout', 'F', 'abcdef') + at(1, 'stdout', 'F', 'ghijkl'));
    expect(await read({ limitBytes: 9 })).toBe('abcdef\ngh');
    expect(await read({ limitBytes: 35, timestamps: true })).toBe('2026-03-01T10:00:00.000000001Z abcd');
  });

  it('tails the last lines, counting a line written in parts once', async () => {
    await writeFile(
      path,
      at(0, 'stdout', 'F', 'first') +
        at(1, 'stdout', 'P', 'sec') +
        at(2, 'stderr', 'F', 'err') +
        at(3, 'stdout', 'F', 'ond') +
        at(4, 'stdout', 'F', 'third') +
        at(5, 'stdout', 'P', 'open'),
    );
    expect(await read({ tailLines: 0 })).toBe('');
    expect(await read({ tailLines: 1 })).toBe('open');
    expect(await read({ tailLines: 3 })).toBe('second\nthird\nopen');
    expect(await read({ tailLines: 4 })).toBe('err\nsecond\nthird\nopen');
    expect(await read({ tailLines: 100 })).toBe('first\nerr\nsecond\nthird\nopen');
    expect(await read({ tailLines: 2, timestamps: true, limitBytes: 40 })).toBe('2026-03-01T10:00:04.000000001Z third\n202');
  });
});

describe('tailEntries', () => {
  /** The forward reading of a file as lines, to compare tails with. */
  function forwardLines(content: string): string[] {
    const assembler = new LogLineAssembler();
    const lines: string[] = [];
    for (const raw of content.split('\n').slice(0, -1)) {
      const entry = parseCriLogLine(Buffer.from(raw));
      const line = entry && assembler.push(entry);
      if (line) lines.push(line.content.toString());
    }
    return [...lines, ...assembler.flush().map((line) => line.content.toString())];
  }

  async function tail(handle: FileHandle, count: number, chunkBytes?: number): Promise<string[]> {
    const { entries } = await tailEntries(handle, count, chunkBytes);
    const assembler = new LogLineAssembler();
    const lines = entries.map((entry) => assembler.push(entry)).filter((line) => line !== undefined);
    return [...lines, ...assembler.flush()].map((line) => line.content.toString());
  }

  it('agrees with reading forwards, whatever the chunk size', async () => {
    const content = [
      'garbage\n',
      at(0, 'stdout', 'F', 'a'),
      at(1, 'stdout', 'P', 'b1'),
      at(2, 'stderr', 'P', 'x1'),
      at(3, 'stdout', 'F', 'b2'),
      'x'.repeat(40) + '\n',
      at(4, 'stderr', 'F', 'x2'),
      at(5, 'stdout', 'F', ''),
      at(6, 'stderr', 'F', 'y'),
      at(7, 'stdout', 'P', 'tail'),
    ].join('');
    await writeFile(path, content + '2026-03-01T10:00:08Z stdout F unfinished');
    const all = forwardLines(content);
    const handle = await open(path);
    try {
      for (const chunkBytes of [1, 7, 50, 64 * 1024])
        for (let count = 0; count <= all.length + 1; count++)
          expect(await tail(handle, count, chunkBytes), `${count} lines in chunks of ${chunkBytes}`).toEqual(
            count === 0 ? [] : all.slice(Math.max(0, all.length - count)),
          );
      expect((await tailEntries(handle, 1)).end).toBe(Buffer.byteLength(content));
    } finally {
      await handle.close();
    }
  });

  it('reads only the end of a big file', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => at(i % 3600, 'stdout', 'F', `line ${i}`));
    await writeFile(path, lines.join(''));
    const handle = await open(path);
    let bytesRead = 0;
    const counting = {
      stat: () => handle.stat(),
      read: async (buffer: Buffer, offset: number, length: number, position: number) => {
        const result = await handle.read(buffer, offset, length, position);
        bytesRead += result.bytesRead;
        return result;
      },
    } as unknown as FileHandle;
    try {
      expect(await tail(counting, 3)).toEqual(['line 199997\n', 'line 199998\n', 'line 199999\n']);
      expect(bytesRead).toBeLessThanOrEqual(64 * 1024);
      expect((await handle.stat()).size).toBeGreaterThan(10_000_000);
    } finally {
      await handle.close();
    }
    const started = performance.now();
    expect(await read({ tailLines: 2 })).toBe('line 199998\nline 199999\n');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('following a container log', () => {
  it('gives lines as they are appended and ends once the container has exited and the file is read', async () => {
    const source = container();
    await writeFile(path, at(0, 'stdout', 'F', 'one'));
    const followed = follow(source);
    await waitFor('the first line', () => followed.text === 'one\n');
    await appendFile(path, at(1, 'stdout', 'P', 'tw'));
    await appendFile(path, at(2, 'stderr', 'F', 'err'));
    await waitFor('the stderr line', () => followed.text === 'one\nerr\n');
    // Half an entry is not read until its newline arrives.
    await appendFile(path, '2026-03-01T10:00:03Z stdout F o');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(followed.text).toBe('one\nerr\n');
    await appendFile(path, '\n' + at(4, 'stdout', 'P', 'last words'));
    source.exit();
    await followed.done;
    expect(followed.text).toBe('one\nerr\ntwo\nlast words');
  });

  it('waits for the file to appear, and follows from the tail', async () => {
    const source = container();
    const followed = follow(source, { tailLines: 1 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    await writeFile(path, at(0, 'stdout', 'F', 'a') + at(1, 'stdout', 'F', 'b'));
    await waitFor('the lines', () => followed.text === 'a\nb\n');
    source.exit();
    await followed.done;

    const abort = new AbortController();
    const again = follow(container(), { tailLines: 1 }, abort.signal);
    await waitFor('the tail', () => again.text === 'b\n');
    await appendFile(path, at(2, 'stdout', 'F', 'c'));
    await waitFor('the new line', () => again.text === 'b\nc\n');
    abort.abort();
    await again.done;
  });

  it('ends when its signal aborts, with the container still running', async () => {
    await writeFile(path, at(0, 'stdout', 'F', 'a'));
    const abort = new AbortController();
    const followed = follow(container(), {}, abort.signal);
    await waitFor('the line', () => followed.text === 'a\n');
    abort.abort();
    await followed.done;
    expect(followed.ended).toBe(true);
  });

  it('stops at limitBytes while following', async () => {
    await writeFile(path, at(0, 'stdout', 'F', 'abc'));
    const followed = follow(container(), { limitBytes: 6 });
    await appendFile(path, at(1, 'stdout', 'F', 'defgh'));
    await followed.done;
    expect(followed.text).toBe('abc\nde');
  });

  it('reads the rest of a rotated file, then the new one', async () => {
    const source = container();
    await writeFile(path, at(0, 'stdout', 'F', 'before'));
    const followed = follow(source);
    await waitFor('the first line', () => followed.text === 'before\n');
    // The kubelet renames the file; the runtime writes on to it until it reopens the path.
    await rename(path, `${path}.20260301-100001`);
    await appendFile(`${path}.20260301-100001`, at(1, 'stdout', 'F', 'late'));
    await writeFile(path, at(2, 'stdout', 'F', 'after'));
    await waitFor('the new file', () => followed.text === 'before\nlate\nafter\n');
    await appendFile(path, at(3, 'stderr', 'F', 'more'));
    await waitFor('more of the new file', () => followed.text.endsWith('after\nmore\n'));
    source.exit();
    await followed.done;
    expect(followed.text).toBe('before\nlate\nafter\nmore\n');
  });

  it('starts over when the file is truncated', async () => {
    const source = container();
    await writeFile(path, at(0, 'stdout', 'F', 'a long first line'));
    const followed = follow(source);
    await waitFor('the first line', () => followed.text === 'a long first line\n');
    await truncate(path, 0);
    await appendFile(path, at(1, 'stdout', 'F', 'b'));
    await waitFor('the line after truncation', () => followed.text === 'a long first line\nb\n');
    source.exit();
    await followed.done;
  });
});
