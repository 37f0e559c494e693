import type { StreamRequest } from '@skiff/kernel';
import { HttpFailure } from './answers.js';
import { queryBool } from './log-options.js';

export type StreamKind = 'exec' | 'attach' | 'portForward';

/** `/exec|attach/{namespace}/{pod}[/{uid}]/{container}` or `/portForward/{namespace}/{pod}[/{uid}]`. */
export interface StreamTarget {
  kind: StreamKind;
  namespace: string;
  pod: string;
  uid?: string;
  container?: string;
}

/** The stream paths upstream's kubelet serves; undefined for another path. `segments` are still escaped. */
export function parseStreamPath(segments: readonly string[]): StreamTarget | undefined {
  const [kind, ...rest] = segments;
  if (kind !== 'exec' && kind !== 'attach' && kind !== 'portForward') return undefined;
  const parts = rest.map(decodeSegment);
  if (parts.some((part) => !part)) return undefined;
  if (kind === 'portForward') {
    if (parts.length !== 2 && parts.length !== 3) return undefined;
    const [namespace, pod, uid] = parts as [string, string, string?];
    return { kind, namespace, pod, ...(uid ? { uid } : {}) };
  }
  if (parts.length !== 3 && parts.length !== 4) return undefined;
  const [namespace, pod] = parts as [string, string];
  const container = parts.at(-1)!;
  return { kind, namespace, pod, ...(parts.length === 4 ? { uid: parts[2] } : {}), container };
}

/** A path segment unescaped; 400 when it is malformed. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpFailure(400, `malformed path segment ${JSON.stringify(segment)}`);
  }
}

/**
 * The streams and command of an exec or attach: upstream's kubelet's parameter names (`input`, `output`,
 * `error`, `tty`, as kube-apiserver sends them) or the API server's (`stdin`, `stdout`, `stderr`). A terminal
 * has no separate stderr; at least one stream is needed, and a command for exec.
 */
export function parseStreamRequest(kind: 'exec' | 'attach', query: URLSearchParams): Omit<StreamRequest, 'containerId'> {
  const flag = (...names: string[]) => names.some((name) => queryBool(query.get(name)));
  const tty = flag('tty');
  const stdin = flag('input', 'stdin');
  const stdout = flag('output', 'stdout');
  const stderr = flag('error', 'stderr') && !tty;
  if (!stdin && !stdout && !stderr) throw new HttpFailure(400, 'you must specify at least 1 of stdin, stdout, stderr');
  if (kind === 'attach') return { stdin, stdout, stderr, tty };
  const cmd = query.getAll('command');
  if (cmd.length === 0) throw new HttpFailure(400, 'you must specify at least one command for the container');
  return { cmd, stdin, stdout, stderr, tty };
}

/** `port=8080&port=9090` (kube-apiserver's name), or `ports=`, each possibly a comma-separated list. */
export function parsePorts(query: URLSearchParams): number[] {
  const ports: number[] = [];
  for (const value of [...query.getAll('port'), ...query.getAll('ports')].flatMap((entry) => entry.split(','))) {
    const text = value.trim();
    if (!text) continue;
    const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!(port >= 1 && port <= 65535)) throw new HttpFailure(400, `invalid port ${JSON.stringify(text)}: a port must be a number between 1 and 65535`);
    ports.push(port);
  }
  return ports;
}
