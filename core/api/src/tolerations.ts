// Taints and tolerations as the scheduler and the DaemonSet controller match them.

/**
 * Kubernetes' ToleratesTaint: the effects agree (an empty one matches every effect) and the keys agree (an
 * empty key with `Exists` matches every taint); `Exists` then tolerates any value, `Equal` (the default)
 * only the taint's own.
 */
export function toleratesTaint(
  toleration: { key?: string; operator?: string; value?: string; effect?: string },
  taint: { key: string; value?: string; effect: string },
): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  if (!toleration.key) return false;
  return (toleration.value ?? '') === (taint.value ?? '');
}
