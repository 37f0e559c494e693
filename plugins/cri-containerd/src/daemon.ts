import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@skiff/kernel';
import { findTool, mountsUnder } from '@skiff/node-host';
import { ContainerdError } from './errors.js';
import { NETNS_ONLY_CNI } from './names.js';

export interface DaemonOptions {
  /** Where containerd keeps its content, snapshots and log: `<node data dir>/containerd`. */
  baseDir: string;
  binary: string;
  sandboxImage: string;
  plainHttpRegistries: readonly string[];
  logLevel: string;
  startTimeoutSeconds: number;
  logger: Logger;
}

/** Where the CNI plugins of Debian's containernetworking-plugins live (containerd needs `loopback`). */
const CNI_BIN_DIR = '/usr/lib/cni';

/** Refuses, with one clear line, on a machine where containerd cannot run pods. */
export async function checkHost(binary: string): Promise<string> {
  if (process.getuid?.() !== 0) throw new ContainerdError('SKIFF_ERR_CONTAINERD_NOT_ROOT');
  const found = await findTool(binary);
  if (!found) throw new ContainerdError('SKIFF_ERR_CONTAINERD_MISSING', { binary });
  if (!(await findTool('runc'))) throw new ContainerdError('SKIFF_ERR_CONTAINERD_MISSING', { binary: 'runc' });
  if (!existsSync(join(CNI_BIN_DIR, 'loopback'))) throw new ContainerdError('SKIFF_ERR_CONTAINERD_MISSING', { binary: `${CNI_BIN_DIR}/loopback` });
  const filesystems = readFileSync('/proc/filesystems', 'utf8');
  if (!/\boverlay\b/.test(filesystems) && !existsSync('/sys/module/overlay')) throw new ContainerdError('SKIFF_ERR_CONTAINERD_NO_OVERLAYFS');
  return found;
}

/**
 * containerd's state (sockets, netns mounts, task bundles) goes under /run, with a short name: unix socket
 * paths are limited to 108 bytes and a node's data dir can be deep.
 */
export function stateDirFor(baseDir: string): string {
  return `/run/skiff-containerd-${createHash('sha256').update(baseDir).digest('hex').slice(0, 12)}`;
}

function toml(value: string): string {
  return JSON.stringify(value);
}

/** containerd 1.6's configuration (version 2) for one node, everything under its own directories. */
export function containerdConfig(options: { baseDir: string; stateDir: string; sandboxImage: string; logLevel: string }): string {
  const { baseDir, stateDir } = options;
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = ${toml(join(baseDir, 'root'))}
state = ${toml(stateDir)}
oom_score = 0

[grpc]
  address = ${toml(join(stateDir, 'containerd.sock'))}

[ttrpc]
  address = ${toml(join(stateDir, 'containerd.sock.ttrpc'))}

[debug]
  level = ${toml(options.logLevel)}

[metrics]
  address = ""

[${cri}]
  sandbox_image = ${toml(options.sandboxImage)}
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true
  restrict_oom_score_adj = true
  tolerate_missing_hugetlb_controller = true
  disable_hugetlb_controller = true
  netns_mounts_under_state_dir = true
  enable_unprivileged_ports = false
  max_container_log_line_size = 16384

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
  discard_unpacked_layers = false

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false

[${cri}.cni]
  bin_dir = ${toml(join(baseDir, 'cni-bin'))}
  conf_dir = ${toml(join(baseDir, 'cni-conf'))}
  max_conf_num = 1

[${cri}.registry]
  config_path = ${toml(join(baseDir, 'certs.d'))}
`;
}

/**
 * The CNI configuration containerd's CRI is given: one plugin that changes nothing and reports `eth0`, so
 * containerd makes the pod's network namespace and the kubelet's own network plugin attaches it.
 */
function netnsOnlyConflist(): string {
  return `${JSON.stringify({ cniVersion: '0.4.0', name: 'skiff-netns-only', plugins: [{ type: NETNS_ONLY_CNI }] }, null, 2)}\n`;
}

/** A CNI plugin (a shell script) that answers ADD with an eth0 in the given namespace and no change made. */
function netnsOnlyPlugin(): string {
  return `#!/bin/sh
# Skiff: containerd makes the namespace; the kubelet's network plugin attaches it (plugins/cri-containerd README).
case "$CNI_COMMAND" in
  ADD) printf '{"cniVersion":"0.4.0","interfaces":[{"name":"%s","sandbox":"%s"}],"ips":[{"version":"4","address":"127.0.0.1/32","interface":0}]}' "$CNI_IFNAME" "$CNI_NETNS" ;;
  VERSION) printf '{"cniVersion":"0.4.0","supportedVersions":["0.3.0","0.3.1","0.4.0"]}' ;;
  *) : ;;
esac
`;
}

/** hosts.toml for a registry containerd may reach over plain HTTP. */
function plainHttpHosts(registry: string): string {
  return `server = "http://${registry}"\n\n[host."http://${registry}"]\n  capabilities = ["pull", "resolve"]\n  skip_verify = true\n`;
}

/** One containerd process for one node, started with a generated configuration and stopped with the node. */
export class ContainerdDaemon {
  readonly socket: string;
  private child: ChildProcess | undefined;
  /** The pid of a containerd an earlier run left behind, adopted instead of started. */
  private adopted: number | undefined;
  private exited: Promise<void> | undefined;
  private failed: Promise<never> | undefined;
  private stopping = false;

  private constructor(
    private readonly options: DaemonOptions,
    readonly stateDir: string,
  ) {
    this.socket = join(stateDir, 'containerd.sock');
  }

  static async start(options: DaemonOptions): Promise<ContainerdDaemon> {
    const binary = await checkHost(options.binary);
    const { baseDir } = options;
    const stateDir = stateDirFor(baseDir);
    const daemon = new ContainerdDaemon(options, stateDir);
    await daemon.writeFiles();
    await daemon.spawn(binary);
    return daemon;
  }

  private async writeFiles(): Promise<void> {
    const { baseDir, plainHttpRegistries } = this.options;
    for (const dir of ['root', 'cni-bin', 'cni-conf', 'certs.d']) await mkdir(join(baseDir, dir), { recursive: true });
    await mkdir(this.stateDir, { recursive: true });
    await writeFile(join(baseDir, 'config.toml'), containerdConfig({ ...this.options, stateDir: this.stateDir }));
    await writeFile(join(baseDir, 'cni-conf', '10-skiff-netns-only.conflist'), netnsOnlyConflist());
    const plugin = join(baseDir, 'cni-bin', NETNS_ONLY_CNI);
    await writeFile(plugin, netnsOnlyPlugin());
    await chmod(plugin, 0o755);
    const loopback = join(baseDir, 'cni-bin', 'loopback');
    const current = await readlink(loopback).catch(() => undefined);
    if (current !== join(CNI_BIN_DIR, 'loopback')) {
      await rm(loopback, { force: true });
      await symlink(join(CNI_BIN_DIR, 'loopback'), loopback);
    }
    for (const registry of plainHttpRegistries) {
      await mkdir(join(baseDir, 'certs.d', registry), { recursive: true });
      await writeFile(join(baseDir, 'certs.d', registry, 'hosts.toml'), plainHttpHosts(registry));
    }
  }

  /**
   * Starts containerd, or adopts the one an earlier Skiff of this node left running (killed with -9, say): it
   * still holds the node's containers, and the kubelet syncs them again instead of losing them.
   */
  private async spawn(binary: string): Promise<void> {
    const { baseDir, logger } = this.options;
    const configFile = join(baseDir, 'config.toml');
    const [running] = processesWithArgs('containerd', ['--config', configFile]);
    if (running !== undefined && existsSync(this.socket)) {
      this.adopted = running;
      logger.warn({ pid: running, socket: this.socket }, 'adopting the containerd an earlier run of this node left running');
      return;
    }
    // A socket left by a containerd that is gone would pass for a started one.
    await rm(this.socket, { force: true });
    // containerd's own log, as private as the container logs it creates (0640).
    const log = openSync(join(baseDir, 'containerd.log'), 'a', 0o640);
    const child = spawn(binary, ['--config', configFile], { stdio: ['ignore', log, log], detached: false });
    closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let started = false;
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (err) => reject(new ContainerdError('SKIFF_ERR_CONTAINERD_START', { detail: err.message })));
      child.once('exit', (code, signal) => {
        const detail = `it exited (${signal ?? code}); see ${join(baseDir, 'containerd.log')}`;
        if (started && !this.stopping) logger.error({ code, signal }, `containerd stopped unexpectedly: ${detail}`);
        reject(new ContainerdError('SKIFF_ERR_CONTAINERD_START', { detail }));
      });
    });
    failed.catch(() => undefined);
    this.failed = failed;
    const deadline = Date.now() + this.options.startTimeoutSeconds * 1000;
    while (!existsSync(this.socket)) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new ContainerdError('SKIFF_ERR_CONTAINERD_START', { detail: `no socket at ${this.socket} after ${this.options.startTimeoutSeconds}s` });
      }
      await Promise.race([new Promise((r) => setTimeout(r, 20)), failed]);
    }
    started = true;
    logger.info({ pid: child.pid, socket: this.socket }, 'containerd started');
  }

  /** Settles with the start's failure if containerd exits before `ready` (so a wait for its socket can stop early). */
  whenFailed(): Promise<never> {
    return this.failed ?? new Promise<never>(() => undefined);
  }

  /** Stops containerd, then any shim of ours still running (containerd leaves its shims on purpose). */
  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await this.exited;
      clearTimeout(timer);
    }
    if (this.adopted !== undefined) await stopProcess(this.adopted, 10_000);
    await killShims(this.socket);
    // Sandboxes still there when containerd stops keep their mounts (shm, network namespace, rootfs): all are
    // under the state dir, so they go with it.
    const left = await unmountUnder(this.stateDir);
    if (left.length) this.options.logger.warn({ mounts: left }, 'mounts left behind under the containerd state dir');
    else await rm(this.stateDir, { recursive: true, force: true }).catch((err: unknown) => this.options.logger.warn({ err }, 'containerd state left behind'));
  }
}

/** Unmounts (lazily, so a busy one still goes) every mount below `dir`; answers the ones that stayed. */
export async function unmountUnder(dir: string): Promise<string[]> {
  for (const point of await mountsUnder(dir)) spawnSync('umount', ['--lazy', point], { stdio: 'ignore' });
  return mountsUnder(dir);
}

/** The pids of processes whose command is `name` and whose arguments contain `args` in order. */
export function processesWithArgs(name: string, args: string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!argv[0] || !(argv[0] === name || argv[0].endsWith(`/${name}`))) continue;
    const at = argv.indexOf(args[0]!);
    if (at >= 0 && args.every((arg, i) => argv[at + i] === arg)) found.push(Number(entry));
  }
  return found;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
async function stopProcess(pid: number, graceMs: number): Promise<void> {
  const alive = () => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSafe(`/proc/${pid}/status`));
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (alive()) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        return;
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Kills containerd-shim processes started for the containerd at `socket` (their `-address` names it). */
export async function killShims(socket: string): Promise<number> {
  let killed = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const args = cmdline.split('\0');
    if (!args[0]?.includes('containerd-shim')) continue;
    const at = args.indexOf('-address');
    if (at < 0 || args[at + 1] !== socket) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
      killed++;
    } catch {
      // already gone
    }
  }
  return killed;
}
