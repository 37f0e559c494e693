// Which lists a strategic merge patch merges, and by what key — Kubernetes keeps this in Go struct tags
// (`patchStrategy:"merge" patchMergeKey:"name"`); Skiff keeps it in a table keyed by field path.
//
// Pattern syntax (one pattern names one list field):
//   - segments are field names joined by `.`, from the object root: `spec.ports` is a Service's ports;
//   - `[]` after a segment steps into the elements of that list: `*.spec.containers[].env`;
//   - a leading `*.` matches any prefix (zero or more segments), so one pattern covers a type wherever it
//     is embedded: `*.spec.containers` is PodSpec.containers in a Pod (`spec.containers`), a Deployment
//     (`spec.template.spec.containers`) and a CronJob (`spec.jobTemplate.spec.template.spec.containers`).
// When several patterns match, the longest wins, and a rooted pattern beats a `*.` pattern of equal length.
// Lists that no pattern names are replaced by the patch, as Kubernetes does for lists without a strategy.
//
// A table compiles (once per table object) into a trie of reversed segments, so a lookup walks at most
// the depth of the path.

/** Merge the list's objects by this key, or (`'merge'`) treat a list of primitives as a set. */
export type ListMergeRule = { readonly mergeKey: string } | 'merge';

export type MergeKeyTable = Readonly<Record<string, ListMergeRule>>;

const byName = { mergeKey: 'name' } as const;

/** The list strategies of the kinds Skiff serves (core/v1, apps/v1, batch/v1 …), from Kubernetes' struct tags. */
export const DEFAULT_MERGE_KEYS: MergeKeyTable = Object.freeze({
  // ObjectMeta: every object, and the metadata of pod templates.
  '*.metadata.finalizers': 'merge',
  '*.metadata.ownerReferences': { mergeKey: 'uid' },

  // PodSpec: a Pod's `spec`, every pod template's `template.spec`.
  '*.spec.containers': byName,
  '*.spec.initContainers': byName,
  '*.spec.ephemeralContainers': byName,
  '*.spec.volumes': byName,
  '*.spec.imagePullSecrets': byName,
  '*.spec.resourceClaims': byName,
  '*.spec.schedulingGates': byName,
  '*.spec.hostAliases': { mergeKey: 'ip' },
  '*.spec.topologySpreadConstraints': { mergeKey: 'topologyKey' },

  // Container, in each of the three container lists.
  '*.spec.containers[].env': byName,
  '*.spec.containers[].ports': { mergeKey: 'containerPort' },
  '*.spec.containers[].volumeMounts': { mergeKey: 'mountPath' },
  '*.spec.containers[].volumeDevices': { mergeKey: 'devicePath' },
  '*.spec.initContainers[].env': byName,
  '*.spec.initContainers[].ports': { mergeKey: 'containerPort' },
  '*.spec.initContainers[].volumeMounts': { mergeKey: 'mountPath' },
  '*.spec.initContainers[].volumeDevices': { mergeKey: 'devicePath' },
  '*.spec.ephemeralContainers[].env': byName,
  '*.spec.ephemeralContainers[].ports': { mergeKey: 'containerPort' },
  '*.spec.ephemeralContainers[].volumeMounts': { mergeKey: 'mountPath' },
  '*.spec.ephemeralContainers[].volumeDevices': { mergeKey: 'devicePath' },

  // Status conditions: Pod, Node, Namespace, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, Service,
  // PersistentVolumeClaim, PodDisruptionBudget, HorizontalPodAutoscaler.
  'status.conditions': { mergeKey: 'type' },
  // PodStatus.
  'status.podIPs': { mergeKey: 'ip' },
  'status.hostIPs': { mergeKey: 'ip' },
  // Node.
  'spec.podCIDRs': 'merge',
  'status.addresses': { mergeKey: 'type' },
  // Service.
  'spec.ports': { mergeKey: 'port' },
  // ServiceAccount.
  secrets: byName,
});

interface TrieNode {
  readonly children: Map<string, TrieNode>;
  /** The rule of a rooted pattern that ends here. */
  rooted?: ListMergeRule;
  /** The rule of a `*.` pattern that ends here. */
  anyPrefix?: ListMergeRule;
}

export interface CompiledMergeKeys {
  /** The rule for list field `field` of the object at `parentPath` (segments as in the patterns), if any. */
  ruleFor(parentPath: readonly string[], field: string): ListMergeRule | undefined;
}

const SEGMENT = /^[^.[\]*]+(?:\[\])?$/;

function insert(root: TrieNode, pattern: string, rule: ListMergeRule): void {
  const anyPrefix = pattern.startsWith('*.');
  const segments = (anyPrefix ? pattern.slice(2) : pattern).split('.');
  const last = segments[segments.length - 1]!;
  if (!segments.every((segment) => SEGMENT.test(segment)) || last.endsWith('[]')) {
    throw new Error(`invalid merge key pattern "${pattern}": expected field names joined by ".", "[]" after list fields, and an optional leading "*."`);
  }
  const valid = rule === 'merge' || (typeof rule === 'object' && typeof rule.mergeKey === 'string' && rule.mergeKey !== '');
  if (!valid) throw new Error(`invalid merge rule for "${pattern}": expected { mergeKey: string } or 'merge'`);
  let node = root;
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = segments[i]!;
    let child = node.children.get(segment);
    if (!child) {
      child = { children: new Map() };
      node.children.set(segment, child);
    }
    node = child;
  }
  if (anyPrefix) node.anyPrefix = rule;
  else node.rooted = rule;
}

function compile(table: MergeKeyTable): CompiledMergeKeys {
  const root: TrieNode = { children: new Map() };
  for (const [pattern, rule] of Object.entries(table)) insert(root, pattern, rule);
  return {
    ruleFor(parentPath, field) {
      let node = root.children.get(field);
      let best = node?.anyPrefix;
      for (let i = parentPath.length - 1; node && i >= 0; i--) {
        node = node.children.get(parentPath[i]!);
        if (node?.anyPrefix) best = node.anyPrefix;
      }
      return node?.rooted ?? best;
    },
  };
}

const compiled = new WeakMap<MergeKeyTable, CompiledMergeKeys>();

/**
 * Compiles a table (cached per table object). Call it when loading a custom table to fail fast on a
 * malformed pattern; the patch functions call it themselves.
 */
export function compileMergeKeys(table: MergeKeyTable): CompiledMergeKeys {
  let result = compiled.get(table);
  if (!result) {
    result = compile(table);
    compiled.set(table, result);
  }
  return result;
}
