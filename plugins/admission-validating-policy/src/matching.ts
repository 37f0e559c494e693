// Which requests a policy's matchConstraints, and a binding's matchResources, select: resource rules (with
// excludeResourceRules taking precedence, matchPolicy Equivalent trying the other versions the API server
// serves the resource in), the namespace selector and the object selector.
import { labelSelectorFromObject, type KubeObject, type LabelSelector, type MatchResources, type NamedRuleWithOperations } from '@skiff/api';
import type { AdmissionOperation } from '@skiff/kernel';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** What of a request matching looks at. */
export interface MatchAttributes {
  operation: AdmissionOperation;
  resource: GroupVersionResource;
  kind: GroupVersionKind;
  subresource: string;
  namespace: string;
  name: string;
  object?: KubeObject;
  oldObject?: KubeObject;
}

/** What matching needs from the cluster. */
export interface MatchContext {
  /** The labels of a namespace; throws when there is no such namespace. */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  /** The other versions the API server serves a resource in, with the kind in each (for matchPolicy Equivalent). */
  equivalents(resource: GroupVersionResource): { resource: GroupVersionResource; kind: GroupVersionKind }[];
}

/** A match, and the resource and kind it matched as (another version when matched as an equivalent). */
export type MatchResult = { matches: false } | { matches: true; resource: GroupVersionResource; kind: GroupVersionKind };

const NO_MATCH: MatchResult = { matches: false };

const anyOr = (patterns: readonly string[] | undefined, value: string) => (patterns ?? []).some((p) => p === '*' || p === value);

/** Whether `pattern` (`pods`, `pods/status`, `*`, `*\/scale`, `pods/*`, `*\/*`) names the resource and subresource. */
function resourcePatternMatches(pattern: string, resource: string, subresource: string): boolean {
  const slash = pattern.indexOf('/');
  const res = slash < 0 ? pattern : pattern.slice(0, slash);
  const sub = slash < 0 ? '' : pattern.slice(slash + 1);
  return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
}

const isNamespaceResource = (resource: GroupVersionResource) => resource.group === '' && resource.resource === 'namespaces';

/** Whether a rule's scope covers the request: Namespace objects are cluster-scoped. */
function scopeMatches(scope: string | undefined, attributes: MatchAttributes, resource: GroupVersionResource): boolean {
  if (scope === undefined || scope === '*') return true;
  const clusterScoped = isNamespaceResource(resource) || attributes.namespace === '';
  return scope === 'Cluster' ? clusterScoped : !clusterScoped;
}

/** Whether one rule selects the request, taken as a request for `resource`. */
export function ruleMatches(rule: NamedRuleWithOperations, attributes: MatchAttributes, resource: GroupVersionResource = attributes.resource): boolean {
  return (
    anyOr(rule.operations, attributes.operation) &&
    anyOr(rule.apiGroups, resource.group) &&
    anyOr(rule.apiVersions, resource.version) &&
    (rule.resources ?? []).some((pattern) => resourcePatternMatches(pattern, resource.resource, attributes.subresource)) &&
    scopeMatches(rule.scope, attributes, resource) &&
    ((rule.resourceNames?.length ?? 0) === 0 || rule.resourceNames!.includes(attributes.name))
  );
}

/** The first rule that selects the request, as it is or (matchPolicy Equivalent) in another served version. */
function matchRules(rules: readonly NamedRuleWithOperations[], equivalent: boolean, attributes: MatchAttributes, context: MatchContext): MatchResult {
  if (rules.some((rule) => ruleMatches(rule, attributes))) return { matches: true, resource: attributes.resource, kind: attributes.kind };
  if (!equivalent) return NO_MATCH;
  const others = context.equivalents(attributes.resource);
  for (const rule of rules) {
    for (const other of others) if (ruleMatches(rule, attributes, other.resource)) return { matches: true, resource: other.resource, kind: other.kind };
  }
  return NO_MATCH;
}

function labelsOf(object: KubeObject | undefined): Record<string, string> | undefined {
  return object?.metadata?.labels;
}

/** A selector left out selects everything, as the API server's defaulting (`{}`) has it. */
const selectorOf = (selector: LabelSelector | undefined) => labelSelectorFromObject(selector ?? {});

async function namespaceMatches(selector: LabelSelector | undefined, attributes: MatchAttributes, context: MatchContext): Promise<boolean> {
  const isNamespace = isNamespaceResource(attributes.resource);
  // A cluster-scoped object other than a Namespace is in no namespace, so no namespace selector leaves it out.
  if (attributes.namespace === '' && !isNamespace) return true;
  const matcher = selectorOf(selector);
  if (matcher.empty) return true;
  if (isNamespace && !attributes.subresource && (attributes.operation === 'CREATE' || attributes.operation === 'UPDATE'))
    return matcher.matches(labelsOf(attributes.object));
  return matcher.matches(await context.namespaceLabels(isNamespace ? attributes.name : attributes.namespace));
}

function objectMatches(selector: LabelSelector | undefined, attributes: MatchAttributes): boolean {
  const matcher = selectorOf(selector);
  if (matcher.empty) return true;
  const matchesObject = (object: KubeObject | undefined) => object !== undefined && object !== null && matcher.matches(labelsOf(object));
  return matchesObject(attributes.object) || matchesObject(attributes.oldObject);
}

/**
 * Whether `criteria` select the request. Resource rules left empty select every resource (a binding's
 * matchResources narrows its policy's constraints only where it says something). A selector that cannot be
 * evaluated (a namespace that does not exist) throws: a configuration error.
 */
export async function matchResources(criteria: MatchResources | undefined, attributes: MatchAttributes, context: MatchContext): Promise<MatchResult> {
  const all: MatchResult = { matches: true, resource: attributes.resource, kind: attributes.kind };
  if (!criteria) return all;
  if (!objectMatches(criteria.objectSelector, attributes)) return NO_MATCH;
  if (!(await namespaceMatches(criteria.namespaceSelector, attributes, context))) return NO_MATCH;
  const equivalent = criteria.matchPolicy !== 'Exact';
  if (matchRules(criteria.excludeResourceRules ?? [], equivalent, attributes, context).matches) return NO_MATCH;
  const rules = criteria.resourceRules ?? [];
  return rules.length === 0 ? all : matchRules(rules, equivalent, attributes, context);
}
