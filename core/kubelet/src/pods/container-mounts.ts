import { mkdir, open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { Container, VolumeMount } from '@skiff/api';
import { mkdirExact, type ContainerMount } from '@skiff/kernel';
import type { MountedVolume } from '../volumes/volume-manager.js';
import { ContainerConfigError } from './container-config-error.js';

/** The files the kubelet mounts into every container besides its volumes. */
export interface PodFileMounts {
  /** The pod's hosts file; mounted once the pod has an IP, unless the container mounts something at /etc/hosts. */
  etcHosts?: string;
  /** This container instance's termination-log file. */
  terminationLog?: string;
}

const PROPAGATION: Readonly<Record<string, ContainerMount['propagation']>> = {
  None: 'PROPAGATION_PRIVATE',
  HostToContainer: 'PROPAGATION_HOST_TO_CONTAINER',
  Bidirectional: 'PROPAGATION_BIDIRECTIONAL',
};

/** `subPath` inside the volume, made if missing (with the volume's permissions), never escaping it through `..` or a symlink. */
async function subPathOf(volume: MountedVolume, subPath: string, mount: VolumeMount): Promise<string> {
  if (isAbsolute(subPath) || subPath.split(/[/\\]/).includes('..'))
    throw new ContainerConfigError(`subPath "${subPath}" of volume mount "${mount.name}" must be a relative path without '..'`);
  const path = join(volume.hostPath, subPath);
  const info = await stat(path).catch(() => undefined);
  if (!info) await mkdirExact(path, (await stat(volume.hostPath)).mode & 0o7777);
  const [root, resolved] = await Promise.all([realpath(volume.hostPath), realpath(path)]);
  const inside = relative(root, resolved);
  if (inside.startsWith('..') || isAbsolute(inside) || inside.split(sep)[0] === '..')
    throw new ContainerConfigError(`subPath "${subPath}" of volume mount "${mount.name}" resolves outside the volume`);
  return resolved;
}

/** Makes the (empty) termination-log file a container writes its last words to; anyone may write it. */
export async function prepareTerminationLog(path: string): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true, mode: 0o750 });
  const handle = await open(path, 'w', 0o666);
  await handle.chmod(0o666);
  await handle.close();
}

/**
 * The CRI mounts of a container: its volumeMounts over the pod's volumes (subPath, readOnly, propagation),
 * then the pod's /etc/hosts, then its termination-log file at terminationMessagePath. `expand` resolves
 * `$(VAR)` in subPathExpr with the container's environment.
 */
export async function containerMounts(
  container: Container,
  volumes: ReadonlyMap<string, MountedVolume>,
  files: PodFileMounts,
  expand: (text: string) => string = (text) => text,
): Promise<ContainerMount[]> {
  const mounts: ContainerMount[] = [];
  for (const mount of container.volumeMounts ?? []) {
    const volume = volumes.get(mount.name);
    if (!volume) throw new ContainerConfigError(`cannot find volume "${mount.name}" to mount into container "${container.name}"`);
    const subPath = mount.subPathExpr ? expand(mount.subPathExpr) : mount.subPath;
    mounts.push({
      containerPath: mount.mountPath,
      hostPath: subPath ? await subPathOf(volume, subPath, mount) : volume.hostPath,
      ...(mount.readOnly || volume.readOnly ? { readonly: true } : {}),
      ...(mount.mountPropagation ? { propagation: PROPAGATION[mount.mountPropagation] } : {}),
    });
  }
  if (files.etcHosts && !mounts.some((mount) => mount.containerPath === '/etc/hosts')) mounts.push({ containerPath: '/etc/hosts', hostPath: files.etcHosts });
  const terminationMessagePath = container.terminationMessagePath;
  if (files.terminationLog && terminationMessagePath) {
    await prepareTerminationLog(files.terminationLog);
    mounts.push({ containerPath: terminationMessagePath, hostPath: files.terminationLog });
  }
  return mounts;
}
