import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, recordingLogger } from '@skiff/kernel';
import { formatLogLine, logFileOf, logTarget, observedLogger, RotatingFile, type ObservedRecord } from './logs.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-logs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the log file', () => {
  it('is created owner-only under logs/, and moves aside to .1 (one old file kept) once full', () => {
    const file = logFileOf(join(dir, 'data'));
    const sink = new RotatingFile(file, 1000, 100);
    const line = `${'x'.repeat(99)}\n`;
    for (let i = 0; i < 25; i++) sink.write(line);
    sink.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(`${file}.1`).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'data', 'logs')).mode & 0o777).toBe(0o700);
    expect(readFileSync(`${file}.1`, 'utf8').length).toBeLessThanOrEqual(1000);
    expect(readFileSync(file, 'utf8').length).toBeLessThanOrEqual(1000);
    expect(existsSync(`${file}.2`)).toBe(false);
  });

  it('is reopened by a second writer once the first moved it aside', () => {
    const file = join(dir, 'shared.log');
    const first = new RotatingFile(file, 400, 100);
    const second = new RotatingFile(file, 400, 100);
    for (let i = 0; i < 5; i++) first.write(`${'a'.repeat(99)}\n`);
    for (let i = 0; i < 2; i++) second.write(`${'b'.repeat(99)}\n`);
    first.close();
    second.close();
    expect(readFileSync(file, 'utf8')).toContain('b'.repeat(99));
  });

  it('writes pino JSON lines when the logs go to the file', () => {
    const data = join(dir, 'cluster');
    const target = logTarget({ toFile: true }, data);
    expect(target).toEqual({ to: 'file', file: join(data, 'logs', 'skiff.log') });
    const file = new RotatingFile(logFileOf(data));
    createLogger('info', file).child({ component: 'apiserver' }).info({ port: 6443 }, 'serving');
    file.close();
    expect(JSON.parse(readFileSync(logFileOf(data), 'utf8'))).toMatchObject({ level: 30, component: 'apiserver', port: 6443, msg: 'serving' });
    expect(logTarget({ toFile: false, format: 'text' }, data)).toEqual({ to: 'stderr', format: 'text' });
    expect(logTarget({ toFile: false }, data)).toEqual({ to: 'stderr', format: 'json' });
  });
});

describe('the text log format', () => {
  it('shows time, level, component and node, the message, then the other fields', () => {
    const time = Date.UTC(2025, 0, 2, 12, 4, 5, 123);
    const line = JSON.stringify({
      level: 40,
      time,
      component: 'kubelet',
      node: 'node-1',
      msg: 'pod sync failed',
      pod: 'default/web',
      attempt: 2,
      reason: 'two words',
    });
    expect(formatLogLine(line)).toBe('12:04:05.123 WARN  kubelet node-1: pod sync failed pod=default/web attempt=2 reason="two words"\n');
  });

  it("indents an error's stack under its line, and passes lines that are not JSON", () => {
    const line = JSON.stringify({ level: 50, time: 0, msg: 'boom', err: { message: 'bad thing', stack: 'Error: bad thing\n    at x' } });
    expect(formatLogLine(line)).toBe('00:00:00.000 ERROR boom err="bad thing"\n    Error: bad thing\n        at x\n');
    expect(formatLogLine('plain')).toBe('plain\n');
  });
});

describe('the observed logger', () => {
  it('hands info records with their bindings to the observer whatever the level lets through, and only while one is set', () => {
    const inner = recordingLogger();
    const seen: ObservedRecord[] = [];
    const observer: { onRecord?: (record: ObservedRecord) => void } = { onRecord: (record) => seen.push(record) };
    const logger = observedLogger(inner, observer).child({ component: 'kubelet' }).child({ node: 'node-1' });
    logger.info({ runtime: 'simulated' }, 'kubelet started');
    logger.debug('not a step');
    observer.onRecord = undefined;
    logger.info('after the start');
    expect(seen).toEqual([{ level: 'info', fields: { component: 'kubelet', node: 'node-1', runtime: 'simulated' }, message: 'kubelet started' }]);
    expect(inner.records.map((r) => [r.level, r.message, r.fields.node])).toEqual([
      ['info', 'kubelet started', 'node-1'],
      ['debug', 'not a step', 'node-1'],
      ['info', 'after the start', 'node-1'],
    ]);
  });
});
