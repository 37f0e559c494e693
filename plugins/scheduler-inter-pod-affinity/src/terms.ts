import {
  labelSelectorFromObject,
  MATCH_NO_LABELS,
  type LabelSelectorMatcher,
  type Labels,
  type Pod,
  type PodAffinityTerm,
  type WeightedPodAffinityTerm,
} from '@skiff/api';

/** A pod affinity term compiled once: its selectors as matchers, its namespaces as a set. */
export interface AffinityTerm {
  readonly topologyKey: string;
  readonly selector: LabelSelectorMatcher;
  readonly namespaces: ReadonlySet<string>;
  /** Matches namespaces by their labels; selects nothing when the term has no namespaceSelector. */
  readonly namespaceSelector: LabelSelectorMatcher;
}

export interface WeightedAffinityTerm extends AffinityTerm {
  readonly weight: number;
}

/** A pod's four kinds of pod (anti-)affinity terms, compiled. */
export interface PodTerms {
  readonly requiredAffinity: readonly AffinityTerm[];
  readonly requiredAntiAffinity: readonly AffinityTerm[];
  readonly preferredAffinity: readonly WeightedAffinityTerm[];
  readonly preferredAntiAffinity: readonly WeightedAffinityTerm[];
}

const NO_TERMS: PodTerms = Object.freeze({ requiredAffinity: [], requiredAntiAffinity: [], preferredAffinity: [], preferredAntiAffinity: [] });

export function podNamespace(pod: Pod): string {
  return pod.metadata.namespace ?? 'default';
}

function compileTerm(pod: Pod, term: PodAffinityTerm): AffinityTerm {
  // No namespaces and no namespaceSelector: the term is about the pod's own namespace.
  const namespaces = !term.namespaces?.length && term.namespaceSelector == null ? [podNamespace(pod)] : (term.namespaces ?? []);
  return {
    topologyKey: term.topologyKey,
    selector: labelSelectorFromObject(term.labelSelector),
    namespaces: new Set(namespaces),
    namespaceSelector: term.namespaceSelector == null ? MATCH_NO_LABELS : labelSelectorFromObject(term.namespaceSelector),
  };
}

function compileWeighted(pod: Pod, terms: readonly WeightedPodAffinityTerm[] | undefined): WeightedAffinityTerm[] {
  return (terms ?? []).map((term) => ({ ...{}, ...compileTerm(pod, term.podAffinityTerm), weight: term.weight }));
}

/** Compiles a pod's terms; throws the selector's error (a 400 ApiError) for an invalid selector. */
export function compilePodTerms(pod: Pod): PodTerms {
  const affinity = pod.spec.affinity;
  if (!affinity?.podAffinity && !affinity?.podAntiAffinity) return NO_TERMS;
  return {
    requiredAffinity: (affinity.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((term) => compileTerm(pod, term)),
    requiredAntiAffinity: (affinity.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((term) => compileTerm(pod, term)),
    preferredAffinity: compileWeighted(pod, affinity.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
    preferredAntiAffinity: compileWeighted(pod, affinity.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
  };
}

// Pods the scheduler holds are never mutated (informer objects), so their compiled terms are kept with them.
const compiled = new WeakMap<Pod, PodTerms>();

/**
 * An existing pod's terms, compiled once per pod object. A pod whose selector does not compile (the API
 * server validates them, so only a hand-made object) counts as having no terms, as upstream's cache does.
 */
export function existingPodTerms(pod: Pod): PodTerms {
  const affinity = pod.spec.affinity;
  // Most pods have no pod affinity at all: answer them without a lookup.
  if (!affinity?.podAffinity && !affinity?.podAntiAffinity) return NO_TERMS;
  let terms = compiled.get(pod);
  if (!terms) {
    try {
      terms = compilePodTerms(pod);
    } catch {
      terms = NO_TERMS;
    }
    compiled.set(pod, terms);
  }
  return terms;
}

/**
 * Whether `pod` is one the term selects: in one of its namespaces (or a namespace its namespaceSelector
 * matches, given that namespace's labels) and matching its label selector.
 */
export function termMatches(term: AffinityTerm, pod: Pod, namespaceLabels: Labels | undefined): boolean {
  if (!term.namespaces.has(podNamespace(pod)) && !term.namespaceSelector.matches(namespaceLabels)) return false;
  return term.selector.matches(pod.metadata.labels);
}

/** The pod matches every one of the terms (and there is at least one). */
export function matchesAllTerms(terms: readonly AffinityTerm[], pod: Pod): boolean {
  if (terms.length === 0) return false;
  for (const term of terms) if (!termMatches(term, pod, undefined)) return false;
  return true;
}

/** Where namespace names and labels come from (the namespace informer once the plugin is initialised). */
export interface NamespaceSource {
  labelsOf(name: string): Labels | undefined;
  /** Names of the namespaces whose labels `selector` matches. */
  matching(selector: LabelSelectorMatcher): string[];
}

/**
 * The incoming pod's term with its namespaceSelector turned into namespace names (the namespaces that
 * exist now), so matching it against other pods needs no namespace labels. A `{}` selector (every
 * namespace) is kept as it is.
 */
export function resolveNamespaces<T extends AffinityTerm>(term: T, source: NamespaceSource | undefined): T {
  if (term.namespaceSelector.empty || term.namespaceSelector === MATCH_NO_LABELS) return term;
  const namespaces = new Set(term.namespaces);
  for (const name of source?.matching(term.namespaceSelector) ?? []) namespaces.add(name);
  return { ...{}, ...term, namespaces, namespaceSelector: MATCH_NO_LABELS };
}

function selectorKey(selector: LabelSelectorMatcher): string {
  // A missing selector (selects nothing) and `{}` (selects everything) both print as "".
  return selector === MATCH_NO_LABELS ? '!' : `=${selector.toString()}`;
}

/** A string that names exactly the pods a term selects (for an incoming pod's term, namespaces resolved). */
export function termSelectionKey(term: AffinityTerm): string {
  return `${[...term.namespaces].sort().join(',')}|${selectorKey(term.namespaceSelector)}|${selectorKey(term.selector)}`;
}

function labelsKey(labels: Labels | undefined): string {
  return JSON.stringify(Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A string that determines which terms select a pod: its namespace, its labels and its namespace's labels. */
export function podIdentityKey(pod: Pod, namespaceLabels: Labels | undefined): string {
  return `${podNamespace(pod)}|${labelsKey(pod.metadata.labels)}|${labelsKey(namespaceLabels)}`;
}
