import type { ResourceDefinition } from '@skiff/kernel';

export interface GroupVersions {
  group: string;
  /** Preferred first (Kubernetes version priority: v2 > v1 > v1beta2 > v1beta1 > v1alpha1). */
  versions: string[];
  resources: Map<string, ResourceDefinition[]>;
}

/** The served groups, in order of first registration, each with its versions and resources. */
export function servedGroups(definitions: ResourceDefinition[]): GroupVersions[] {
  const groups = new Map<string, GroupVersions>();
  for (const definition of definitions) {
    let entry = groups.get(definition.group);
    if (!entry) {
      entry = { group: definition.group, versions: [], resources: new Map() };
      groups.set(definition.group, entry);
    }
    const list = entry.resources.get(definition.version);
    if (list) list.push(definition);
    else {
      entry.resources.set(definition.version, [definition]);
      entry.versions.push(definition.version);
    }
  }
  for (const entry of groups.values()) entry.versions.sort(compareVersionPriority);
  return [...groups.values()];
}

const STABILITY: Record<string, number> = { '': 3, beta: 2, alpha: 1 };

/** Sorts higher-priority versions first, as kube-apiserver does. */
export function compareVersionPriority(a: string, b: string): number {
  const parse = (version: string) => {
    const match = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(version);
    return match ? { major: Number(match[1]), stability: STABILITY[match[2] ?? '']!, minor: Number(match[3] ?? 0) } : { major: 0, stability: 0, minor: 0 };
  };
  const left = parse(a);
  const right = parse(b);
  return right.stability - left.stability || right.major - left.major || right.minor - left.minor || a.localeCompare(b);
}
