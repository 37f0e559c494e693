import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@skiff/kernel';
import { findTool } from '@skiff/node-host';
import { ContainerdError } from './errors.js';
import { runcRootFor, sweepLeftovers } from './leftovers.js';
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
  Root = ${toml(runcRootFor(stateDir))}

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

/** How many times containerd may be started again within RESTART_WINDOW_MS before the node gives up on it. */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;
const RESTART_PAUSE_MS = 500;

/**
 * running: answering (or ended without its exit reported yet); restarting: being started again after it ended on
 * its own; stopping: the node stops it; failed: it could not be started again.
 */
type DaemonState = 'running' | 'restarting' | 'stopping' | 'failed';

/**
 * One containerd process for one node, started with a generated configuration and stopped with the node.
 * It runs in a session of its own, so a signal meant for Skiff's process group (Ctrl-C in a terminal) does not
 * end it before the node has stopped its pods through it; when it ends anyway (a service manager's SIGTERM to
 * every process, kill -9), it is started again and takes its running shims over.
 */
export class ContainerdDaemon {
  readonly socket: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  /** The pid of a containerd an earlier run left behind, adopted instead of started. */
  private adopted: number | undefined;
  /** Settles with the first start's failure (see whenFailed). */
  private failed: Promise<never> | undefined;
  private state: DaemonState = 'running';
  private restarting: Promise<boolean> | undefined;
  /** When containerd was started again, within the last RESTART_WINDOW_MS. */
  private readonly restarts: number[] = [];

  private constructor(
    private readonly options: DaemonOptions,
    readonly stateDir: string,
    private readonly binary: string,
  ) {
    this.socket = join(stateDir, 'containerd.sock');
  }

  static async start(options: DaemonOptions): Promise<ContainerdDaemon> {
    const binary = await checkHost(options.binary);
    const daemon = new ContainerdDaemon(options, stateDirFor(options.baseDir), binary);
    await daemon.writeFiles();
    await daemon.adoptOrLaunch();
    return daemon;
  }

  private async writeFiles(): Promise<void> {
    const { baseDir, plainHttpRegistries } = this.options;
    for (const dir of ['root', 'cni-bin', 'cni-conf', 'certs.d']) await mkdir(join(baseDir, dir), { recursive: true });
    await mkdir(this.stateDir, { recursive: true });
    await writeFile(join(baseDir, 'config.toml'), containerdConfig({ ...{}, ...this.options, stateDir: this.stateDir }));
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
  private async adoptOrLaunch(): Promise<void> {
    const [running] = processesWithArgs('containerd', ['--config', join(this.options.baseDir, 'config.toml')]);
    if (running !== undefined && existsSync(this.socket)) {
      this.adopted = running;
      this.options.logger.warn({ pid: running, socket: this.socket }, 'adopting the containerd an earlier run of this node left running');
      return;
    }
    await this.launch();
  }

  /** Starts a containerd in a session of its own and waits for its socket. */
  private async launch(): Promise<void> {
    const { baseDir, logger } = this.options;
    // A socket left by a containerd that is gone would pass for a started one.
    await rm(this.socket, { force: true });
    // containerd's own log, as private as the container logs it creates (0640).
    const log = openSync(join(baseDir, 'containerd.log'), 'a', 0o640);
    // Through a shell that sets umask 022: containerd inherits skiff's 0077, and the directories it creates for image
    // layers would then be 0700, so a container's non-root user could not read its own root filesystem.
    const child = spawn('/bin/sh', ['-c', 'umask 022; exec "$0" "$@"', this.binary, '--config', join(baseDir, 'config.toml')], {
      stdio: ['ignore', log, log],
      detached: true,
    });
    closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let started = false;
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (err) => reject(new ContainerdError('SKIFF_ERR_CONTAINERD_START', { detail: err.message })));
      child.once('exit', (code, signal) => {
        if (this.child === child) this.child = undefined;
        const detail = `it exited (${signal ?? code}); see ${join(baseDir, 'containerd.log')}`;
        if (started && this.state === 'running') {
          logger.error({ code, signal }, `containerd stopped unexpectedly: ${detail}; starting it again`);
          void this.restart();
        }
        reject(new ContainerdError('SKIFF_ERR_CONTAINERD_START', { detail }));
      });
    });
    failed.catch(() => undefined);
    this.failed ??= failed;
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

  /** Starts containerd again, one restart at a time: true once it answers, false when the node stops meanwhile or it keeps failing. */
  private restart(): Promise<boolean> {
    this.restarting ??= this.relaunch().finally(() => (this.restarting = undefined));
    return this.restarting;
  }

  private async relaunch(): Promise<boolean> {
    const { logger } = this.options;
    this.state = 'restarting';
    this.adopted = undefined;
    for (;;) {
      const now = Date.now();
      while (this.restarts.length > 0 && now - this.restarts[0]! > RESTART_WINDOW_MS) this.restarts.shift();
      if (this.restarts.length >= MAX_RESTARTS) break;
      this.restarts.push(now);
      try {
        await this.launch();
        if (this.state !== 'restarting') return false;
        this.state = 'running';
        logger.warn({ pid: this.child?.pid }, 'containerd started again; it takes its running shims over');
        return true;
      } catch (err) {
        if (this.state !== 'restarting') return false;
        logger.warn({ err }, 'starting containerd again failed');
        await new Promise((r) => setTimeout(r, RESTART_PAUSE_MS));
      }
    }
    if (this.state !== 'restarting') return false;
    this.state = 'failed';
    logger.error({}, `containerd could not be started again (${MAX_RESTARTS} starts within a minute); the node's pods are cleaned up without it when it stops`);
    return false;
  }

  /** Settles with the start's failure if containerd exits before `ready` (so a wait for its socket can stop early). */
  whenFailed(): Promise<never> {
    return this.failed ?? new Promise<never>(() => undefined);
  }

  /**
   * Whether containerd is there to answer, asked after a call found it unreachable: waits out a restart under
   * way, and starts again an adopted containerd that is gone. False while the node stops it, or once it could not
   * be started again.
   */
  async available(): Promise<boolean> {
    if (this.restarting) return this.restarting;
    if (this.state !== 'running') return false;
    if (this.adopted !== undefined && !isAlive(this.adopted)) return this.restart();
    return true;
  }

  /**
   * Stops containerd, then removes whatever of the node's pods is still there — the kubelet stops them through
   * containerd first; this is for when it could not — and the state dir.
   */
  async stop(): Promise<void> {
    this.state = 'stopping';
    await this.restarting;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await this.exited;
      clearTimeout(timer);
    }
    if (this.adopted !== undefined) await stopProcess(this.adopted, 10_000);
    await sweepLeftovers({ stateDir: this.stateDir, socket: this.socket, logger: this.options.logger });
  }
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
  const alive = () => isAlive(pid);
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

/** A process that exists and is not a zombie. */
function isAlive(pid: number): boolean {
  return existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSafe(`/proc/${pid}/status`));
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
