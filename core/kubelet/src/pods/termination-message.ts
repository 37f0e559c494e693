import { open } from 'node:fs/promises';
import type { Container } from '@skiff/api';
import type { ContainerStatusInfo } from '@skiff/kernel';

/** Kubernetes keeps the last 4096 bytes of a termination-log file… */
export const MAX_TERMINATION_MESSAGE_BYTES = 4096;
/** …and, falling back to the log, its last 80 lines, at most 2048 bytes. */
export const MAX_TERMINATION_LOG_LINES = 80;
export const MAX_TERMINATION_LOG_BYTES = 2048;

/** The last `limit` bytes of a file; undefined when there is no file. */
async function readTail(path: string, limit: number): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, limit);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer;
  } finally {
    await handle.close();
  }
}

/** The content of the last lines of a CRI log file (`<time> <stream> <P|F> <content>`), partial lines joined. */
async function logTail(path: string): Promise<string> {
  // Four times the byte budget, so the kept lines are whole even with their timestamps and tags.
  const raw = await readTail(path, MAX_TERMINATION_LOG_BYTES * 4);
  if (!raw) return '';
  const lines = raw.toString('utf8').split('\n');
  if (raw.length === MAX_TERMINATION_LOG_BYTES * 4) lines.shift();
  let text = '';
  for (const line of lines) {
    const [, , tag, ...content] = line.split(' ');
    if (tag === undefined) continue;
    text += content.join(' ') + (tag.split(':')[0] === 'P' ? '' : '\n');
  }
  const kept = text
    .split('\n')
    .slice(-(MAX_TERMINATION_LOG_LINES + 1))
    .join('\n');
  const bytes = Buffer.from(kept, 'utf8');
  return bytes.length > MAX_TERMINATION_LOG_BYTES ? bytes.subarray(bytes.length - MAX_TERMINATION_LOG_BYTES).toString('utf8') : kept;
}

/**
 * What a container that exited said about it: the runtime's message, then (after `: `) the termination-log
 * file's content, or — with terminationMessagePolicy FallbackToLogsOnError, a non-zero exit and an empty
 * file — the end of its log.
 */
export async function terminationMessage(container: Container, instance: ContainerStatusInfo, terminationLog: string): Promise<string | undefined> {
  let message = container.terminationMessagePath ? ((await readTail(terminationLog, MAX_TERMINATION_MESSAGE_BYTES))?.toString('utf8') ?? '') : '';
  const fallback = container.terminationMessagePolicy === 'FallbackToLogsOnError' && (instance.exitCode ?? 0) !== 0;
  if (!message && fallback && instance.logPath) message = await logTail(instance.logPath);
  if (!message) return instance.message;
  return instance.message ? `${instance.message}: ${message}` : message;
}
