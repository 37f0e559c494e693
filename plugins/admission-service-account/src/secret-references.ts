import type { Container, PodSpec, ServiceAccount, Volume } from '@skiff/api';
import type { ServiceAccountAdmissionErrorCode } from './errors.js';

export interface Refusal {
  code: ServiceAccountAdmissionErrorCode;
  params?: Record<string, string | number>;
}

/** Whether a volume takes anything from a secret: its content, or credentials for a storage driver. */
function volumeUsesSecret(volume: Volume): boolean {
  if (volume.secret) return true;
  if (volume.projected?.sources?.some((source) => source.secret)) return true;
  if (volume.azureFile?.secretName) return true;
  if (volume.csi?.nodePublishSecretRef) return true;
  const drivers = [volume.cephfs, volume.cinder, volume.flexVolume, volume.iscsi, volume.rbd, volume.scaleIO, volume.storageos];
  return drivers.some((driver) => driver?.secretRef);
}

function containers(spec: PodSpec, lists: readonly ('initContainers' | 'containers' | 'ephemeralContainers')[]): Container[] {
  return lists.flatMap((list) => spec[list] ?? []);
}

/**
 * What keeps a mirror pod out: the kubelet made it from a static manifest, outside the API's reach, so it may not
 * run as a ServiceAccount, read secrets, or project tokens or trust bundles.
 */
export function mirrorPodRefusal(spec: PodSpec): Refusal | undefined {
  if (spec.serviceAccountName) return { code: 'SKIFF_ERR_SERVICE_ACCOUNT_MIRROR_ACCOUNT' };
  const volumes = spec.volumes ?? [];
  const envSecrets = containers(spec, ['initContainers', 'containers', 'ephemeralContainers']).some(
    (c) => c.env?.some((env) => env.valueFrom?.secretKeyRef) || c.envFrom?.some((from) => from.secretRef),
  );
  const pullSecrets = Array.isArray(spec.imagePullSecrets) && spec.imagePullSecrets.length > 0;
  if (envSecrets || pullSecrets || volumes.some(volumeUsesSecret)) return { code: 'SKIFF_ERR_SERVICE_ACCOUNT_MIRROR_SECRETS' };
  const projections = volumes.flatMap((volume) => volume.projected?.sources ?? []);
  if (projections.some((source) => source.serviceAccountToken)) return { code: 'SKIFF_ERR_SERVICE_ACCOUNT_MIRROR_TOKEN' };
  if (projections.some((source) => source.clusterTrustBundle)) return { code: 'SKIFF_ERR_SERVICE_ACCOUNT_MIRROR_TRUST_BUNDLE' };
  return undefined;
}

// The spellings of true that Go's strconv.ParseBool accepts, as kube-apiserver reads the annotation.
const TRUE_WORDS = new Set(['1', 't', 'T', 'true', 'True', 'TRUE']);

/** Whether `account` limits its pods to the secrets it lists: always with the plugin's option, else by its annotation. */
export function enforcesMountableSecrets(account: ServiceAccount, limitSecretReferences: boolean, annotation: string): boolean {
  if (limitSecretReferences) return true;
  return TRUE_WORDS.has(account.metadata.annotations?.[annotation] ?? '');
}

const CONTAINER_LABELS = { initContainers: 'init container', containers: 'container', ephemeralContainers: 'ephemeral container' } as const;

/** The first secret a container list reads through env or envFrom that the account does not list. */
function unlistedContainerSecret(spec: PodSpec, list: keyof typeof CONTAINER_LABELS, listed: Set<string>, account: string): Refusal | undefined {
  for (const c of containers(spec, [list])) {
    const container = `${CONTAINER_LABELS[list]} ${c.name}`;
    for (const env of c.env ?? []) {
      const secret = env.valueFrom?.secretKeyRef?.name ?? '';
      if (env.valueFrom?.secretKeyRef && !listed.has(secret))
        return { code: 'SKIFF_ERR_SERVICE_ACCOUNT_SECRET_ENV', params: { container, env: env.name, secret, account } };
    }
    for (const from of c.envFrom ?? []) {
      const secret = from.secretRef?.name ?? '';
      if (from.secretRef && !listed.has(secret)) return { code: 'SKIFF_ERR_SERVICE_ACCOUNT_SECRET_ENV_FROM', params: { container, secret, account } };
    }
  }
  return undefined;
}

/**
 * The first secret the pod references that its ServiceAccount does not list: secret volumes, env and envFrom
 * of init containers and containers against `secrets`, image pull secrets against `imagePullSecrets`.
 */
export function unlistedSecretReference(spec: PodSpec, account: ServiceAccount): Refusal | undefined {
  const name = account.metadata.name ?? '';
  const listed = new Set((account.secrets ?? []).map((secret) => secret.name ?? ''));
  for (const volume of spec.volumes ?? []) {
    const secret = volume.secret?.secretName ?? '';
    if (volume.secret && !listed.has(secret)) return { code: 'SKIFF_ERR_SERVICE_ACCOUNT_SECRET_VOLUME', params: { secret, account: name } };
  }
  const fromContainers = unlistedContainerSecret(spec, 'initContainers', listed, name) ?? unlistedContainerSecret(spec, 'containers', listed, name);
  if (fromContainers) return fromContainers;
  const pullable = new Set((account.imagePullSecrets ?? []).map((secret) => secret.name ?? ''));
  const pullSecrets = Array.isArray(spec.imagePullSecrets) ? spec.imagePullSecrets : [];
  const index = pullSecrets.findIndex((secret) => !pullable.has(secret.name ?? ''));
  if (index >= 0) return { code: 'SKIFF_ERR_SERVICE_ACCOUNT_PULL_SECRET', params: { index, secret: pullSecrets[index]!.name ?? '', account: name } };
  return undefined;
}

/** The first secret an ephemeral container reads that the account does not list (pods/ephemeralcontainers updates). */
export function unlistedEphemeralSecretReference(spec: PodSpec, account: ServiceAccount): Refusal | undefined {
  const listed = new Set((account.secrets ?? []).map((secret) => secret.name ?? ''));
  return unlistedContainerSecret(spec, 'ephemeralContainers', listed, account.metadata.name ?? '');
}
