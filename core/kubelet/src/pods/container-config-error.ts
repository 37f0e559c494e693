/**
 * A container's config cannot be made (a missing ConfigMap key, a volume mount naming no volume): the
 * container waits with reason CreateContainerConfigError and this message, as in Kubernetes.
 */
export class ContainerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContainerConfigError';
  }
}
