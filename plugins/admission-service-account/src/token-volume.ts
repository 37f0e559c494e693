import { randomInt } from 'node:crypto';
import type { PodSpec, Volume } from '@skiff/api';
import { ROOT_CA_CONFIG_MAP, TOKEN_EXPIRATION_SECONDS, TOKEN_MOUNT_PATH, TOKEN_VOLUME_MODE, TOKEN_VOLUME_PREFIX } from './names.js';

// Kubernetes' alphabet for generated name suffixes: no vowels, no look-alike digits.
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const SUFFIX_LENGTH = 5;

/** A fresh token volume name: `kube-api-access-` and five random characters. */
export function tokenVolumeName(): string {
  let suffix = '';
  for (let i = 0; i < SUFFIX_LENGTH; i++) suffix += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  return TOKEN_VOLUME_PREFIX + suffix;
}

/** The projected volume a pod's API credentials come from: a bound token, the cluster's CA and the pod's namespace. */
export function tokenVolume(name: string): Volume {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
        { configMap: { name: ROOT_CA_CONFIG_MAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: TOKEN_VOLUME_MODE,
    },
  };
}

/**
 * Mounts the API credentials at TOKEN_MOUNT_PATH, read-only, in every init container and container that mounts
 * nothing there yet (ephemeral containers are left as they are). A `kube-api-access-*` volume the pod already has
 * is reused; otherwise one is added when some container got the mount. Returns the volume's name, or undefined
 * when no container needed it.
 */
export function mountToken(spec: PodSpec, newName: () => string = tokenVolumeName): string | undefined {
  const volumes = spec.volumes ?? [];
  const existing = volumes.find((volume) => volume.name?.startsWith(TOKEN_VOLUME_PREFIX));
  const name = existing?.name ?? newName();
  let mounted = false;
  for (const list of ['initContainers', 'containers'] as const) {
    for (const container of spec[list] ?? []) {
      if (container.volumeMounts?.some((mount) => mount.mountPath === TOKEN_MOUNT_PATH)) continue;
      (container.volumeMounts ??= []).push({ name, readOnly: true, mountPath: TOKEN_MOUNT_PATH });
      mounted = true;
    }
  }
  if (!mounted) return undefined;
  if (!existing) spec.volumes = [...volumes, tokenVolume(name)];
  return name;
}
