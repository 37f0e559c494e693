/** A timestamp the way Kubernetes serialises metav1.Time: RFC 3339, whole seconds, UTC. */
export function kubeTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d+Z$/, 'Z');
}
