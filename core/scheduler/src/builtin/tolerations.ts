import { toleratesTaint, type Pod } from '@skiff/api';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export function podToleratesTaint(pod: Pod, taint: Taint): boolean {
  return (pod.spec.tolerations ?? []).some((toleration) => toleratesTaint(toleration, taint));
}
