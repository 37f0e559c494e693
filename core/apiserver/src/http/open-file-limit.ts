import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Files kept for everything besides client connections: the store, logs, the kubelet's runtime and pod files. */
const MIN_RESERVE = 512;
/** Above this, memory (some 12 KiB per idle TLS connection), not descriptors, is what runs out. */
const MAX_DERIVED = 32_768;
/** When the limit cannot be read (neither /proc nor a POSIX shell). */
const UNKNOWN_LIMIT_CONNECTIONS = 1_024;

/** The process's soft limit on open files (`ulimit -n`): Infinity when unlimited, undefined when unreadable. */
export function openFileLimit(): number | undefined {
  try {
    const value = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (value !== undefined) return value === 'unlimited' ? Infinity : Number(value);
  } catch {
    // Not Linux: ask a shell, which inherits this process's limit (Node raised it to the hard limit at start).
  }
  const shell = spawnSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2_000 });
  const text = shell.stdout?.trim();
  if (text === 'unlimited') return Infinity;
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/**
 * How many client connections the API server holds at most when not configured: the open-file limit less a
 * reserve of a quarter (at least 512) for the store, the kubelet and its runtime, so that a flood of connections
 * never takes the descriptors they need.
 */
export function defaultMaxConnections(limit: number | undefined): number {
  if (limit === undefined) return UNKNOWN_LIMIT_CONNECTIONS;
  if (!Number.isFinite(limit)) return MAX_DERIVED;
  const reserve = Math.max(MIN_RESERVE, Math.ceil(limit / 4));
  return Math.min(MAX_DERIVED, Math.max(Math.floor(limit / 4), limit - reserve));
}
