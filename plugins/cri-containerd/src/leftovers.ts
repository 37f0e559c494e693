import { execFile } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '@skiff/kernel';
import { findTool, mountsUnder } from '@skiff/node-host';
import { CRI_NAMESPACE } from './names.js';

// What a node's containerd can leave on the host when it did not tear its pods down itself (it died first, or
// could not be reached): shims, runc containers (processes, cgroups, state), shim sockets, CRI's CNI results and
// mounts. Everything here is found from the node's own state dir, so another containerd's things are never touched.

const run = promisify(execFile);

/** The runc root the runc v2 shim uses when the runtime options name none; shared by every containerd on the host. */
const SHARED_RUNC_ROOT = '/run/containerd/runc';
/** containerd 1.6's CRI caches its CNI results here (libcni's default; containerd has no setting for it). */
const CNI_RESULTS_DIR = '/var/lib/cni/results';
/** The v2 runtime's task bundles (each with the `address` of its shim's socket), by namespace, under the state dir. */
const TASK_BUNDLES = 'io.containerd.runtime.v2.task';

/** Where runc keeps this node's containers: under the state dir, so nothing of them lands in the shared root. */
export function runcRootFor(stateDir: string): string {
  return join(stateDir, 'runc');
}

export interface SweepResult {
  shims: number;
  containers: number;
  shimSockets: number;
  cniResults: number;
  /** Mounts under the state dir that stayed (it is then kept too). */
  mountsLeft: string[];
}

function isUnder(path: string, dir: string): boolean {
  return path.startsWith(dir + sep);
}

async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Kills containerd-shim processes started for the containerd at `socket` (their `-address` names it). */
async function killShims(socket: string): Promise<number> {
  let killed = 0;
  for (const entry of await entries('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
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

/** The rootfs runc recorded for a container (state.json's `config.rootfs`). */
function rootfsOf(state: unknown): string | undefined {
  if (typeof state !== 'object' || state === null || !('config' in state)) return undefined;
  const { config } = state;
  return typeof config === 'object' && config !== null && 'rootfs' in config && typeof config.rootfs === 'string' ? config.rootfs : undefined;
}

/**
 * `runc delete --force` for every container of this node: it kills the container's processes (each has its own
 * PID namespace, so its init takes the rest along) and removes its cgroups and state. The shared root is
 * searched too, for containers an earlier Skiff made before runc's root was the state dir's.
 */
async function deleteContainers(stateDir: string, logger: Logger): Promise<number> {
  const runc = await findTool('runc');
  if (!runc) return 0;
  let deleted = 0;
  for (const [root, ours] of [
    [join(runcRootFor(stateDir), CRI_NAMESPACE), true],
    [join(SHARED_RUNC_ROOT, CRI_NAMESPACE), false],
  ] as const) {
    for (const id of await entries(root)) {
      const state = await readJson(join(root, id, 'state.json'));
      const rootfs = rootfsOf(state);
      if (!ours && !(rootfs && isUnder(rootfs, stateDir))) continue;
      try {
        await run(runc, ['--root', root, 'delete', '--force', id], { timeout: 30_000 });
        deleted++;
      } catch (err) {
        logger.warn({ container: id, root, err }, 'runc could not delete a container left behind');
      }
    }
  }
  return deleted;
}

/**
 * Shims listen on sockets in containerd's shared folder (/run/containerd/s), whatever the state dir; a shim that
 * was killed leaves its socket. Each task bundle names its shim's socket in `address`.
 */
async function removeShimSockets(stateDir: string): Promise<number> {
  let removed = 0;
  const bundles = join(stateDir, TASK_BUNDLES);
  for (const namespace of await entries(bundles)) {
    for (const id of await entries(join(bundles, namespace))) {
      const address = (await readFile(join(bundles, namespace, id, 'address'), 'utf8').catch(() => '')).trim();
      const path = address.replace(/^unix:\/\//, '');
      if (!path.startsWith('/run/containerd/s/')) continue;
      await rm(path, { force: true });
      removed++;
    }
  }
  return removed;
}

/** The network namespaces a cached CNI result names (`interfaces[].sandbox`). */
function sandboxesOf(cached: unknown): string[] {
  if (typeof cached !== 'object' || cached === null || !('result' in cached)) return [];
  const { result } = cached;
  if (typeof result !== 'object' || result === null || !('interfaces' in result) || !Array.isArray(result.interfaces)) return [];
  return (result.interfaces as unknown[]).flatMap((i) =>
    typeof i === 'object' && i !== null && 'sandbox' in i && typeof i.sandbox === 'string' ? [i.sandbox] : [],
  );
}

/** CRI's cached CNI results for sandboxes of this node (their namespaces live under its state dir). */
async function removeCniResults(stateDir: string): Promise<number> {
  let removed = 0;
  for (const name of await entries(CNI_RESULTS_DIR)) {
    const file = join(CNI_RESULTS_DIR, name);
    if (!sandboxesOf(await readJson(file)).some((netns) => isUnder(netns, stateDir))) continue;
    await rm(file, { force: true });
    removed++;
  }
  return removed;
}

/** Unmounts (lazily, so a busy one still goes) every mount below `dir`; answers the ones that stayed. */
async function unmountUnder(dir: string): Promise<string[]> {
  for (const point of await mountsUnder(dir)) await run('umount', ['--lazy', point]).catch(() => undefined);
  return mountsUnder(dir);
}

/**
 * Removes what a node's containerd left once it is stopped: its shims, its containers, their shim sockets, CRI's
 * CNI results for their namespaces, the mounts under the state dir (namespaces, shm, root filesystems) and the
 * state dir itself. Safe to run again: each step finds only what is still there.
 */
export async function sweepLeftovers(options: { stateDir: string; socket: string; logger: Logger }): Promise<SweepResult> {
  const { stateDir, socket, logger } = options;
  const shims = await killShims(socket);
  const containers = await deleteContainers(stateDir, logger);
  const shimSockets = await removeShimSockets(stateDir);
  const cniResults = await removeCniResults(stateDir);
  const mountsLeft = await unmountUnder(stateDir);
  if (mountsLeft.length) logger.warn({ mounts: mountsLeft }, 'mounts left behind under the containerd state dir');
  else await rm(stateDir, { recursive: true, force: true }).catch((err: unknown) => logger.warn({ err }, 'containerd state left behind'));
  const result = { shims, containers, shimSockets, cniResults, mountsLeft };
  if (shims + containers + cniResults > 0) logger.info(result, 'removed what containerd left behind');
  return result;
}
