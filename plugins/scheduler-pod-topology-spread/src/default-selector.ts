import {
  MATCH_ALL_LABELS,
  RESOURCES,
  labelSelectorFromObject,
  type LabelSelector,
  type LabelSelectorMatcher,
  type LabelSelectorRequirement,
  type Pod,
  type ReplicaSet,
  type ReplicationController,
  type Service,
  type StatefulSet,
} from '@skiff/api';
import type { Informer, InformerFactory } from '@skiff/kernel';

/** The informers the cluster default constraints read selectors from. */
export interface SelectorSources {
  services: Informer<Service>;
  replicationControllers: Informer<ReplicationController>;
  replicaSets: Informer<ReplicaSet>;
  statefulSets: Informer<StatefulSet>;
}

export function selectorSources(informers: InformerFactory): SelectorSources {
  return {
    services: informers.informer<Service>(RESOURCES.services),
    replicationControllers: informers.informer<ReplicationController>(RESOURCES.replicationcontrollers),
    replicaSets: informers.informer<ReplicaSet>(RESOURCES.replicasets),
    statefulSets: informers.informer<StatefulSet>(RESOURCES.statefulsets),
  };
}

/** A selector's requirements as expressions (so several selectors can be ANDed into one). */
function asExpressions(selector: LabelSelector): LabelSelectorRequirement[] {
  const pinned = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({ key, operator: 'In', values: [value] }));
  return [...pinned, ...(selector.matchExpressions ?? [])];
}

/**
 * The selector a pod without constraints is spread by: the selectors of the Services in its namespace
 * that select it, merged, ANDed with its controller's (ReplicationController, ReplicaSet or StatefulSet,
 * by the controller owner reference). Selects everything (`empty`) when none applies.
 */
export function defaultSelector(pod: Pod, sources: SelectorSources): LabelSelectorMatcher {
  const namespace = pod.metadata.namespace ?? '';
  const podLabels = pod.metadata.labels ?? {};
  let matchLabels: Record<string, string> = {};
  for (const service of sources.services.list(namespace)) {
    const selector = service.spec?.selector;
    if (!selector) continue;
    if (Object.entries(selector).every(([key, value]) => Object.hasOwn(podLabels, key) && podLabels[key] === value))
      matchLabels = { ...{}, ...matchLabels, ...selector };
  }
  const matchExpressions: LabelSelectorRequirement[] = [];
  const owner = pod.metadata.ownerReferences?.find((ref) => ref.controller);
  const key = owner && `${namespace}/${owner.name}`;
  if (owner?.apiVersion === 'v1' && owner.kind === 'ReplicationController') {
    const selector = sources.replicationControllers.get(key!)?.spec?.selector;
    if (selector) matchLabels = { ...{}, ...matchLabels, ...selector };
  } else if (owner?.apiVersion === 'apps/v1' && (owner.kind === 'ReplicaSet' || owner.kind === 'StatefulSet')) {
    const source = owner.kind === 'ReplicaSet' ? sources.replicaSets : sources.statefulSets;
    const selector = (source as Informer<ReplicaSet | StatefulSet>).get(key!)?.spec?.selector;
    if (selector) matchExpressions.push(...asExpressions(selector));
  }
  if (Object.keys(matchLabels).length === 0 && matchExpressions.length === 0) return MATCH_ALL_LABELS;
  return labelSelectorFromObject({ matchLabels, matchExpressions });
}
