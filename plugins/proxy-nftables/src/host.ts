import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '@skiff/api';
import { findTool, toolPath } from '@skiff/node-host';
import { ProxyError } from './errors.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], input?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

/**
 * A long-lived `nft -i` for the small transactions of incremental syncs. nft applies each input line as one
 * transaction; a process that exits after a transaction which deleted rules or elements waits in the kernel for
 * their release (an RCU grace period, often 10–20 ms), which a process that stays avoids. After each transaction
 * a marker line follows that nft refuses as a syntax error: its complaint on stderr closes what the transaction
 * said there, in order. HOME points nowhere, so nft's line editor keeps no history file.
 */
class NftSession {
  private readonly child;
  private stderr = '';
  private waiting: { marker: string; resolve(problem: string | undefined): void } | undefined;
  private sequence = 0;
  private exited = false;
  private queue: Promise<unknown> = Promise.resolve();
  transactions = 0;

  constructor(command: string, args: readonly string[]) {
    this.child = spawn(command, [...args], { stdio: ['pipe', 'ignore', 'pipe'], env: { ...{}, ...process.env, HOME: '/nonexistent' } });
    this.child.stdin.on('error', () => undefined);
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
      this.settle();
    });
    this.child.on('error', () => this.exit());
    this.child.on('close', () => this.exit());
  }

  get alive(): boolean {
    return !this.exited;
  }

  run(script: string): Promise<string | undefined> {
    const next = this.queue.then(() => this.send(script));
    this.queue = next.catch(() => undefined);
    return next;
  }

  close(): void {
    this.child.stdin.end();
  }

  private send(script: string): Promise<string | undefined> {
    if (this.exited) return Promise.resolve('nft exited');
    const marker = `skiff-sync-done-${++this.sequence}`;
    this.transactions++;
    return new Promise((resolve) => {
      this.waiting = { marker, resolve };
      this.child.stdin.write(`${script.trim().split('\n').join('; ')}\n${marker}\n`);
    });
  }

  private settle(): void {
    if (!this.waiting) return;
    const lines = this.stderr.split('\n');
    const at = lines.indexOf(this.waiting.marker);
    // Wait for the whole complaint: the marker's caret line too, up to its newline.
    if (at < 0 || lines.length < at + 3) return;
    // Before the marker: its own "Error: syntax error" line, and before that whatever the transaction said.
    const said = lines
      .slice(0, Math.max(0, at - 1))
      .join('\n')
      .trim();
    this.stderr = lines.slice(at + 2).join('\n');
    const { resolve } = this.waiting;
    this.waiting = undefined;
    resolve(said || undefined);
  }

  private exit(): void {
    this.exited = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve(`nft exited: ${this.stderr.trim()}`);
  }
}

/** A session is replaced after this many transactions: nft's line editor keeps every line in memory. */
const SESSION_TRANSACTIONS = 500;

/**
 * The host commands of the proxy: nft, conntrack and sysctls, run on this host or, for tests and benchmarks,
 * inside a named network namespace (`nsenter --net=/run/netns/<name>`).
 */
export class HostCommands {
  private session: NftSession | undefined;

  private constructor(
    private readonly nftPath: string,
    private readonly conntrackPath: string | undefined,
    private readonly prefix: string[],
  ) {}

  /** Checks root and the tools: nft is required, conntrack only for the UDP cleanup (`undefined` then). */
  static async create(netns: string | undefined, { uid = process.getuid?.(), path = toolPath() }: { uid?: number; path?: string } = {}): Promise<HostCommands> {
    if (uid !== 0) throw new ProxyError('SKIFF_ERR_PROXY_NOT_ROOT', { uid: String(uid ?? 'unknown') });
    const nft = await findTool('nft', path);
    if (!nft) throw new ProxyError('SKIFF_ERR_PROXY_TOOL_MISSING', { tool: 'nft', package: 'nftables' });
    let prefix: string[] = [];
    if (netns) {
      const nsenter = await findTool('nsenter', path);
      if (!nsenter) throw new ProxyError('SKIFF_ERR_PROXY_TOOL_MISSING', { tool: 'nsenter', package: 'util-linux' });
      prefix = [nsenter, `--net=${netns.includes('/') ? netns : `/run/netns/${netns}`}`, '--'];
    }
    return new HostCommands(nft, await findTool('conntrack', path), prefix);
  }

  get hasConntrack(): boolean {
    return this.conntrackPath !== undefined;
  }

  private exec(command: string, args: readonly string[], input?: string): Promise<RunResult> {
    const [first, ...rest] = this.prefix;
    return first ? run(first, [...rest, command, ...args], input) : run(command, args, input);
  }

  /** Applies one transaction; answers nft's complaint when it refuses it (nothing of it is applied then). */
  async nft(script: string): Promise<string | undefined> {
    const result = await this.exec(this.nftPath, ['-f', '-'], script);
    return result.code === 0 ? undefined : result.stderr.trim() || `nft exited with ${result.code}`;
  }

  /** Like `nft`, through the long-lived session: for the small, frequent transactions. */
  async nftQuick(script: string): Promise<string | undefined> {
    if (!this.session?.alive || this.session.transactions >= SESSION_TRANSACTIONS) {
      this.session?.close();
      const [first, ...rest] = this.prefix;
      this.session = first ? new NftSession(first, [...rest, this.nftPath, '-i']) : new NftSession(this.nftPath, ['-i']);
    }
    return this.session.run(script);
  }

  /** Ends the session (the proxy stops). */
  close(): void {
    this.session?.close();
    this.session = undefined;
  }

  /** Deletes conntrack entries; matching none is fine. */
  async conntrackDelete(filter: readonly string[]): Promise<string | undefined> {
    if (!this.conntrackPath) return undefined;
    const result = await this.exec(this.conntrackPath, ['-D', ...filter]);
    if (result.code === 0 || /0 flow entries/.test(result.stderr)) return undefined;
    return result.stderr.trim() || `conntrack exited with ${result.code}`;
  }

  /** Sets a sysctl unless it has the value already; `optional` ones are skipped when the kernel lacks them. */
  async sysctl(key: string, value: string, optional = false): Promise<void> {
    const file = join('/proc/sys', ...key.split('.'));
    try {
      if (this.prefix.length) {
        // /proc/sys/net shows the network namespace of the process reading it: read and write from inside.
        const script = `[ -e "$1" ] || exit 3; [ "$(cat "$1")" = "$2" ] || echo "$2" > "$1"`;
        const result = await this.exec('/bin/sh', ['-c', script, 'sh', file, value]);
        if (result.code === 3 && optional) return;
        if (result.code !== 0) throw new Error(result.code === 3 ? `${file} does not exist` : result.stderr.trim());
        return;
      }
      const current = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' && optional) return undefined;
        throw err;
      });
      if (current === undefined || current.trim() === value) return;
      await writeFile(file, value);
    } catch (err) {
      throw new ProxyError('SKIFF_ERR_PROXY_SYSCTL', { key, value, detail: errorMessage(err) }, { cause: err });
    }
  }
}
