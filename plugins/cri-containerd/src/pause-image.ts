import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ContainerdError } from './errors.js';

const run = promisify(execFile);

/** Where Debian's busybox-static puts its binary. */
const BUSYBOX_PATHS = ['/usr/bin/busybox', '/bin/busybox'];

/** The sandbox's one process: waits for TERM or INT and exits 0, reaping nothing (the pod's PID 1 of a shared namespace aside). */
const PAUSE_SCRIPT = `#!/bin/sh
trap 'exit 0' TERM INT
while :; do sleep 3600 & wait $!; done
`;

/** True when an ELF binary asks for a dynamic loader (a PT_INTERP program header): it would not run alone in an image. */
export function isDynamicElf(bytes: Buffer): boolean {
  if (bytes.length < 64 || bytes.readUInt32BE(0) !== 0x7f454c46) return true;
  const is64 = bytes[4] === 2;
  const little = bytes[5] === 1;
  const u16 = (at: number) => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  const u32 = (at: number) => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const phoff = is64 ? Number(little ? bytes.readBigUInt64LE(0x20) : bytes.readBigUInt64BE(0x20)) : u32(0x1c);
  const phentsize = u16(is64 ? 0x36 : 0x2a);
  const phnum = u16(is64 ? 0x38 : 0x2c);
  for (let i = 0; i < phnum; i++) if (u32(phoff + i * phentsize) === 3) return true;
  return false;
}

const ARCHITECTURES: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

function digest(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Builds the pause image (`name`, e.g. skiff.local/pause:3.10) from the host's static busybox as a
 * docker-archive tar at `file`: no registry serves one here, and no package ships one.
 */
export async function buildPauseImage(name: string, file: string): Promise<void> {
  const busybox = BUSYBOX_PATHS.find((path) => existsSync(path));
  if (!busybox || isDynamicElf(readFileSync(busybox))) {
    throw new ContainerdError('SKIFF_ERR_CONTAINERD_MISSING', { binary: 'a static busybox (Debian package busybox-static)' });
  }
  const work = await mkdtemp(`${file}.build-`);
  try {
    const root = join(work, 'rootfs');
    await mkdir(join(root, 'bin'), { recursive: true });
    await writeFile(join(root, 'bin', 'busybox'), readFileSync(busybox), { mode: 0o755 });
    for (const applet of ['sh', 'sleep']) await symlink('busybox', join(root, 'bin', applet));
    await writeFile(join(root, 'pause'), PAUSE_SCRIPT);
    await chmod(join(root, 'pause'), 0o755);
    const image = join(work, 'image');
    await mkdir(image);
    // Modes fixed in the archive: under skiff's umask 0077 the folders above are 0700, and a pod whose user is not
    // root could not run its pause process.
    await run('tar', [
      '--sort=name',
      '--mtime=@0',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--mode=u+rwX,go+rX,go-w',
      '-C',
      root,
      '-cf',
      join(image, 'layer.tar'),
      '.',
    ]);
    const layer = digest(readFileSync(join(image, 'layer.tar')));
    const config = JSON.stringify({
      architecture: ARCHITECTURES[process.arch] ?? process.arch,
      os: 'linux',
      config: { Entrypoint: ['/pause'], Env: ['PATH=/bin'] },
      rootfs: { type: 'layers', diff_ids: [`sha256:${layer}`] },
      history: [{ created_by: 'skiff: busybox-static and a pause script' }],
    });
    const configFile = `${digest(config)}.json`;
    await writeFile(join(image, configFile), config);
    await writeFile(join(image, 'manifest.json'), JSON.stringify([{ Config: configFile, RepoTags: [name], Layers: ['layer.tar'] }]));
    await run('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '-C', image, '-cf', file, '.']);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
