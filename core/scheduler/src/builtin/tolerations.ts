import { toleratesTaint, type Pod } from '@skiff/api';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

type Toleration = Parameters<typeof toleratesTaint>[0];

export function podToleratesTaint(pod: Pod, taint: Taint): boolean {
  const tolerations = (pod.spec.tolerations ?? []) as Toleration[];
  return tolerations.some((toleration) => toleratesTaint(toleration, taint));
}
