import type { Container, Pod } from '@skiff/api';
import type { FileOwner, PayloadFile } from './atomic-writer.js';

/**
 * The uid every container of the pod runs as, when all name the same one through their own or the pod's
 * securityContext (Kubernetes' FsUser); undefined when a container names none or two differ. Ephemeral containers
 * have no say, as in Kubernetes.
 */
export function podFsUser(pod: Pod): number | undefined {
  const containers: Container[] = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  let user: number | undefined;
  for (const container of containers) {
    const runAsUser = container.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser;
    if (runAsUser === undefined || (user !== undefined && user !== runAsUser)) return undefined;
    user = runAsUser;
  }
  return user;
}

/**
 * How a ServiceAccount token file is written, as Kubernetes writes it. When the pod says who reads it — one user
 * for all its containers, or an fsGroup — the token is that user's alone (0600, owned by it) or also its group's
 * (0640, group fsGroup). Otherwise the container's user is unknown (the image decides it), so the volume's
 * defaultMode (0644 by default) stands, or non-root containers could not read their own token.
 */
export function tokenFile(pod: Pod, data: Buffer, defaultMode: number): PayloadFile {
  const uid = podFsUser(pod);
  const gid = pod.spec.securityContext?.fsGroup;
  if (uid === undefined && gid === undefined) return { data, mode: defaultMode };
  const owner: FileOwner = { ...{}, ...(uid !== undefined ? { uid } : {}), ...(gid !== undefined ? { gid } : {}) };
  return { data, mode: gid !== undefined ? 0o640 : 0o600, owner };
}
