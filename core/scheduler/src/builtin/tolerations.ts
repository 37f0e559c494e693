import type { Pod } from '@skiff/api';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
}

/** Kubernetes' ToleratesTaint: an empty effect matches every effect, an empty key with Exists every key. */
function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  if (!toleration.key) return false;
  return (toleration.value ?? '') === (taint.value ?? '');
}

export function podToleratesTaint(pod: Pod, taint: Taint): boolean {
  const tolerations = (pod.spec.tolerations ?? []) as Toleration[];
  return tolerations.some((toleration) => tolerates(toleration, taint));
}
