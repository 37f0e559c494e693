import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** What `npx skiff` runs: the bin npm linked at install time (the README's first command). */
export const SKIFF_BIN = join(REPO_ROOT, 'node_modules/.bin/skiff');

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `skiff-it-${prefix}-`));
}

/** The line `skiff` prints when it ends on a bug (an unhandled rejection or an uncaught exception; core/cli/src/crash.ts). */
const INTERNAL_ERROR_LINE = /^skiff: internal error \(.*$/m;
const serverCrashes: string[] = [];

/**
 * The stderr of every server started here that ended on a bug, since the last call. integration-tests/setup.ts
 * fails the test during which one did; a test that makes a server crash on purpose takes them itself.
 */
export function takeServerCrashes(): string[] {
  return serverCrashes.splice(0);
}

export interface RunningSkiff {
  process: ChildProcess;
  server: string;
  kubeconfig: string;
  stdout: () => string;
  stderr: () => string;
  /** Sends SIGINT and waits for a clean exit; returns the exit code. */
  stop(): Promise<number | null>;
}

/** `skiff up`s leading process groups of their own: a terminal's Ctrl-C to the tests does not reach them. */
const detachedChildren = new Set<ChildProcess>();
let stopsDetachedOnExit = false;

/** Stops them (SIGINT to their groups) when the test process exits, so a failed or interrupted run leaves no cluster. */
function stopDetachedOnExit(child: ChildProcess): void {
  if (!stopsDetachedOnExit) {
    stopsDetachedOnExit = true;
    process.once('exit', () => {
      for (const running of detachedChildren) {
        try {
          process.kill(-running.pid!, 'SIGINT');
        } catch {
          // already gone
        }
      }
    });
  }
  detachedChildren.add(child);
  child.once('exit', () => detachedChildren.delete(child));
}

/**
 * Starts the real `skiff up` CLI in a child process and waits for its ready line.
 * Port 0 lets the OS pick a free port; the ready line says which. With `detached`, it leads a process group of its own.
 */
export async function startSkiff(args: string[], options: { cwd?: string; timeoutMs?: number; detached?: boolean } = {}): Promise<RunningSkiff> {
  const child = spawn(process.execPath, [SKIFF_BIN, 'up', '--port', '0', '--log-level', 'warn', ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, as a terminal gives a command: a test can then signal the whole group (Ctrl-C).
    detached: options.detached ?? false,
  });
  if (options.detached) stopDetachedOnExit(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // Once it has exited and its stderr is complete, so that what is recorded has the whole stack.
  child.once('close', (code) => {
    if (INTERNAL_ERROR_LINE.test(err)) serverCrashes.push(`skiff up ${args.join(' ')} (exit code ${code}):\n${err}`);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const ready = await new Promise<{ server: string; kubeconfig: string }>((resolveReady, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`skiff up not ready after ${options.timeoutMs ?? 30_000} ms\nstdout:\n${out}\nstderr:\n${err}`)),
      options.timeoutMs ?? 30_000,
    );
    const check = () => {
      const server = /^ready: (https:\/\/\S+)/m.exec(out)?.[1];
      const kubeconfig = /^kubeconfig: (\S+)/m.exec(out)?.[1];
      if (server && kubeconfig) {
        clearTimeout(timer);
        resolveReady({ server, kubeconfig });
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`skiff up exited with ${code}\nstdout:\n${out}\nstderr:\n${err}`));
    });
  });
  return {
    process: child,
    ...ready,
    stdout: () => out,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}

/** Runs `skiff up` expecting it to fail; returns exit code and output. */
export async function runSkiffExpectingFailure(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [SKIFF_BIN, 'up', '--port', '0', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The real kubectl (the dispatcher on PATH picks the version matching the server). */
export class Kubectl {
  readonly cacheDir = tempDir('kubectl-cache');
  constructor(readonly kubeconfig: string) {}

  run(args: string[], options: { timeoutMs?: number; input?: string } = {}): Promise<KubectlResult> {
    return new Promise((resolveRun) => {
      const child = spawn('kubectl', ['--kubeconfig', this.kubeconfig, '--cache-dir', this.cacheDir, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
      // 'close', not 'exit': the process can end before its last output is read from the pipes.
      child.once('close', (code) => {
        clearTimeout(timer);
        resolveRun({ code, stdout, stderr });
      });
      child.stdin.end(options.input ?? '');
    });
  }

  /** Runs and fails the test with kubectl's own output when it exits non-zero. */
  async ok(...args: string[]): Promise<string> {
    const result = await this.run(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}\n${result.stderr}${result.stdout}`);
    return result.stdout;
  }

  async json<T = any>(...args: string[]): Promise<T> {
    return JSON.parse(await this.ok(...args, '-o', 'json')) as T;
  }

  /** Starts a long-running kubectl (get -w) and collects its output until stopped. */
  stream(args: string[]): { output: () => string; stop: () => void } {
    const child = spawn('kubectl', ['--kubeconfig', this.kubeconfig, '--cache-dir', this.cacheDir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    return { output: () => out, stop: () => child.kill('SIGTERM') };
  }

  cleanup(): void {
    rmSync(this.cacheDir, { recursive: true, force: true });
  }
}

/** The repo's one polling helper; pass CLUSTER_TIMEOUT when waiting on a `skiff up` cluster. */
export { waitFor } from '@skiff/kernel';

/** A cluster in another process, seen through kubectl, settles more slowly than an in-process one. */
export const CLUSTER_TIMEOUT = { timeoutMs: 15_000 };

export interface PodSummary {
  name: string;
  phase?: string;
  node?: string;
  ip?: string;
  owner?: string;
  deleting: boolean;
}

export async function pods(kubectl: Kubectl, selector?: string): Promise<PodSummary[]> {
  const list = await kubectl.json('get', 'pods', ...(selector ? ['-l', selector] : []));
  return (list.items as any[]).map((p) => ({
    name: p.metadata.name,
    phase: p.status?.phase,
    node: p.spec.nodeName,
    ip: p.status?.podIP,
    owner: p.metadata.ownerReferences?.[0]?.name,
    deleting: Boolean(p.metadata.deletionTimestamp),
  }));
}
