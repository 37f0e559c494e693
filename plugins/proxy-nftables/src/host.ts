import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { errorMessage } from '@skiff/api';
import { ProxyError } from './errors.js';

/** PATH plus the sbin folders a non-login root shell may lack (nft and conntrack live there). */
function toolPath(): string[] {
  return [...new Set([...(process.env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/local/bin', '/usr/bin', '/bin'])].filter(
    Boolean,
  );
}

async function findTool(tool: string, dirs: readonly string[]): Promise<string | undefined> {
  for (const dir of dirs) {
    const file = join(dir, tool);
    if (
      await access(file, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return file;
  }
  return undefined;
}

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
 * The host commands of the proxy: nft, conntrack and sysctls, run on this host or, for tests and benchmarks,
 * inside a named network namespace (`nsenter --net=/run/netns/<name>`).
 */
export class HostCommands {
  private constructor(
    private readonly nftPath: string,
    private readonly conntrackPath: string | undefined,
    private readonly prefix: string[],
  ) {}

  /** Checks root and the tools: nft is required, conntrack only for the UDP cleanup (`undefined` then). */
  static async create(
    netns: string | undefined,
    { uid = process.getuid?.(), dirs = toolPath() }: { uid?: number; dirs?: readonly string[] } = {},
  ): Promise<HostCommands> {
    if (uid !== 0) throw new ProxyError('SKIFF_ERR_PROXY_NOT_ROOT', { uid: String(uid ?? 'unknown') });
    const nft = await findTool('nft', dirs);
    if (!nft) throw new ProxyError('SKIFF_ERR_PROXY_TOOL_MISSING', { tool: 'nft', package: 'nftables' });
    let prefix: string[] = [];
    if (netns) {
      const nsenter = await findTool('nsenter', dirs);
      if (!nsenter) throw new ProxyError('SKIFF_ERR_PROXY_TOOL_MISSING', { tool: 'nsenter', package: 'util-linux' });
      prefix = [nsenter, `--net=${netns.includes('/') ? netns : `/run/netns/${netns}`}`, '--'];
    }
    return new HostCommands(nft, await findTool('conntrack', dirs), prefix);
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
