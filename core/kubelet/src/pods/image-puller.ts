import { errorMessage, type Container, type Pod, type Secret } from '@skiff/api';
import type { ContainerRuntime } from '@skiff/kernel';
import type { EnvSources } from '../env/env-sources.js';
import { formatDuration, type PodEventSink } from './events.js';
import { keyringFromPullSecrets } from './registry-keyring.js';

/** Why a container cannot start yet, as its status's waiting state says it. */
export interface Waiting {
  reason: string;
  message?: string;
}

/** Kubernetes' default pull policy: Always for `:latest` or untagged images, IfNotPresent otherwise. */
export function pullPolicy(container: Container): string {
  if (container.imagePullPolicy) return container.imagePullPolicy;
  const image = container.image ?? '';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  if (image.includes('@')) return 'IfNotPresent';
  return !lastSegment.includes(':') || lastSegment.endsWith(':latest') ? 'Always' : 'IfNotPresent';
}

/** Where pull secrets are read: the same API access the kubelet reads environment Secrets through. */
export type PullSecretSource = Pick<EnvSources, 'secret'>;

/** One error out of several failed attempts, as Go's aggregate error prints it: `[first, second]`, repeats once. */
function aggregateError(errors: unknown[]): unknown {
  const messages = [...new Set(errors.map(errorMessage))];
  return messages.length === 1 ? errors[0]! : new Error(`[${messages.join(', ')}]`);
}

/**
 * Makes sure a container's image is on the node, following its pull policy, and tells the story in
 * Kubernetes' events (Pulling / Pulled / Failed / BackOff). A failed pull answers ErrImagePull the first
 * time and ImagePullBackOff while it keeps failing; the caller retries with backoff.
 *
 * A pull uses the pod's `imagePullSecrets` as the kubelet does: every credential for the image's registry
 * in turn until one pulls (all failing: the pull fails with all their errors); no credential for it: a pull
 * without credentials. A secret that cannot be retrieved is a FailedToRetrieveImagePullSecret warning, not a
 * failure; one whose docker config is broken fails the pull (a PullSecretError), as in Kubernetes.
 */
export class ImagePuller {
  /** Consecutive failed pulls per pod uid + container name. */
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly runtime: ContainerRuntime,
    private readonly secrets: PullSecretSource,
  ) {}

  async ensure(pod: Pod, container: Container, event: PodEventSink): Promise<Waiting | undefined> {
    const image = container.image ?? '';
    const policy = pullPolicy(container);
    const key = `${pod.metadata.uid}/${container.name}`;
    if (policy !== 'Always') {
      const present = await this.runtime.imageStatus(image);
      if (present) {
        event('Normal', 'Pulled', `Container image "${image}" already present on machine`);
        return undefined;
      }
      if (policy === 'Never') {
        const message = `Container image "${image}" is not present with pull policy of Never`;
        event('Warning', 'ErrImageNeverPull', message);
        return { reason: 'ErrImageNeverPull', message };
      }
    }
    const secrets = await this.pullSecrets(pod, event);
    const failedBefore = this.failures.get(key) ?? 0;
    if (failedBefore > 0) event('Normal', 'BackOff', `Back-off pulling image "${image}"`);
    event('Normal', 'Pulling', `Pulling image "${image}"`);
    const began = performance.now();
    try {
      await this.pull(image, secrets);
    } catch (err) {
      this.failures.set(key, failedBefore + 1);
      const message = `Failed to pull image "${image}": ${errorMessage(err)}`;
      event('Warning', 'Failed', message);
      event('Warning', 'Failed', 'Error: ErrImagePull');
      return { reason: failedBefore > 0 ? 'ImagePullBackOff' : 'ErrImagePull', message: failedBefore > 0 ? `Back-off pulling image "${image}"` : message };
    }
    this.failures.delete(key);
    const took = formatDuration(performance.now() - began);
    const size = (await this.runtime.imageStatus(image))?.size;
    event('Normal', 'Pulled', `Successfully pulled image "${image}" in ${took} (${took} including waiting)${size ? `. Image size: ${size} bytes.` : ''}`);
    return undefined;
  }

  private async pull(image: string, secrets: readonly Secret[]): Promise<void> {
    const credentials = keyringFromPullSecrets(secrets).lookup(image);
    if (credentials.length === 0) {
      await this.runtime.pullImage(image);
      return;
    }
    const errors: unknown[] = [];
    for (const auth of credentials) {
      try {
        await this.runtime.pullImage(image, auth);
        return;
      } catch (err) {
        errors.push(err);
      }
    }
    throw aggregateError(errors);
  }

  /** The pod's pull secrets that exist; the names of missing or unreadable ones go in one warning event. */
  private async pullSecrets(pod: Pod, event: PodEventSink): Promise<Secret[]> {
    const names = (pod.spec.imagePullSecrets ?? []).map((ref) => ref.name ?? '').filter((name) => name !== '');
    if (names.length === 0) return [];
    const namespace = pod.metadata.namespace!;
    const read = await Promise.all(names.map((name) => this.secrets.secret(namespace, name).catch(() => undefined)));
    const missing = names.filter((_, i) => !read[i]);
    if (missing.length > 0)
      event(
        'Warning',
        'FailedToRetrieveImagePullSecret',
        `Unable to retrieve some image pull secrets (${missing.join(', ')}); attempting to pull the image may not succeed.`,
      );
    return read.filter((secret): secret is Secret => secret !== undefined);
  }

  /** Forgets a pod's pull failures (it is gone). */
  forget(podUid: string): void {
    for (const key of this.failures.keys()) if (key.startsWith(`${podUid}/`)) this.failures.delete(key);
  }
}
