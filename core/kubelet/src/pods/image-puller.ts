import type { Container } from '@skiff/api';
import type { ContainerRuntime } from '@skiff/kernel';
import { formatDuration, type PodEventSink } from './events.js';

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

/**
 * Makes sure a container's image is on the node, following its pull policy, and tells the story in
 * Kubernetes' events (Pulling / Pulled / Failed / BackOff). A failed pull answers ErrImagePull the first
 * time and ImagePullBackOff while it keeps failing; the caller retries with backoff.
 */
export class ImagePuller {
  /** Consecutive failed pulls per pod uid + container name. */
  private readonly failures = new Map<string, number>();

  constructor(private readonly runtime: ContainerRuntime) {}

  async ensure(podUid: string, container: Container, event: PodEventSink): Promise<Waiting | undefined> {
    const image = container.image ?? '';
    const policy = pullPolicy(container);
    const key = `${podUid}/${container.name}`;
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
    const failedBefore = this.failures.get(key) ?? 0;
    if (failedBefore > 0) event('Normal', 'BackOff', `Back-off pulling image "${image}"`);
    event('Normal', 'Pulling', `Pulling image "${image}"`);
    const began = performance.now();
    try {
      await this.runtime.pullImage(image);
    } catch (err) {
      this.failures.set(key, failedBefore + 1);
      const message = `Failed to pull image "${image}": ${(err as Error).message}`;
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

  /** Forgets a pod's pull failures (it is gone). */
  forget(podUid: string): void {
    for (const key of this.failures.keys()) if (key.startsWith(`${podUid}/`)) this.failures.delete(key);
  }
}
