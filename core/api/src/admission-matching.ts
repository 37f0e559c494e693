// Which admission requests a rule set selects, as admission webhooks and ValidatingAdmissionPolicies both read
// their rules: operations, groups, versions, resources with their subresources, scope (and resource names where a
// rule has them), matchPolicy Equivalent trying the other versions the API server serves the resource in, and the
// object and namespace selectors.
import type { KubeObject } from './types.js';
import type { RuleWithOperations } from './generated/types.js';
import type { LabelSelectorMatcher } from './labels.js';

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

/** What of an admission request matching looks at. */
export interface AdmissionMatchAttributes {
  /** CREATE, UPDATE, DELETE or CONNECT. */
  operation: string;
  resource: GroupVersionResource;
  kind: GroupVersionKind;
  subresource: string;
  namespace: string;
  name: string;
  object?: KubeObject;
  oldObject?: KubeObject;
}

/** What matching needs from the cluster. */
export interface AdmissionMatchContext {
  /** The labels of a namespace. */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  /** The other versions the API server serves a resource in, with the kind in each (for matchPolicy Equivalent). */
  equivalents(resource: GroupVersionResource): { resource: GroupVersionResource; kind: GroupVersionKind }[];
}

/** A match, and the resource and kind it matched as (another version when matched as an equivalent). */
export type AdmissionMatchResult = { matches: false } | { matches: true; resource: GroupVersionResource; kind: GroupVersionKind };

/** A rule of either kind: a webhook's RuleWithOperations, or a policy's NamedRuleWithOperations with resource names. */
export type AdmissionRule = RuleWithOperations & { resourceNames?: string[] };

const NO_MATCH: AdmissionMatchResult = { matches: false };

const anyOr = (patterns: readonly string[] | undefined, value: string) => (patterns ?? []).some((pattern) => pattern === '*' || pattern === value);

/**
 * Whether `pattern` names the resource and subresource: `pods` (the object only), `pods/status`, `pods/*` (pods and
 * every subresource of pods), `*` (every resource, no subresource), `*\/scale`, `*\/*` (everything).
 */
export function resourcePatternMatches(pattern: string, resource: string, subresource: string): boolean {
  const slash = pattern.indexOf('/');
  const res = slash < 0 ? pattern : pattern.slice(0, slash);
  const sub = slash < 0 ? '' : pattern.slice(slash + 1);
  return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
}

const isNamespaceResource = (resource: GroupVersionResource) => resource.group === '' && resource.resource === 'namespaces';

/** Whether a rule's scope covers the request; a Namespace object is cluster-scoped. */
function scopeMatches(scope: string | undefined, attributes: AdmissionMatchAttributes, resource: GroupVersionResource): boolean {
  if (scope === undefined || scope === '*') return true;
  const clusterScoped = isNamespaceResource(resource) || attributes.namespace === '';
  return scope === 'Cluster' ? clusterScoped : !clusterScoped;
}

/** Whether one rule selects the request, taken as a request for `resource`. */
export function admissionRuleMatches(rule: AdmissionRule, attributes: AdmissionMatchAttributes, resource: GroupVersionResource = attributes.resource): boolean {
  return (
    anyOr(rule.operations, attributes.operation) &&
    anyOr(rule.apiGroups, resource.group) &&
    anyOr(rule.apiVersions, resource.version) &&
    (rule.resources ?? []).some((pattern) => resourcePatternMatches(pattern, resource.resource, attributes.subresource)) &&
    scopeMatches(rule.scope, attributes, resource) &&
    (!rule.resourceNames?.length || rule.resourceNames.includes(attributes.name))
  );
}

/** The resource and kind the rules select the request as: itself, or (`equivalent`) another served version. */
export function matchAdmissionRules(
  rules: readonly AdmissionRule[],
  equivalent: boolean,
  attributes: AdmissionMatchAttributes,
  context: Pick<AdmissionMatchContext, 'equivalents'>,
): AdmissionMatchResult {
  if (rules.some((rule) => admissionRuleMatches(rule, attributes))) return { matches: true, resource: attributes.resource, kind: attributes.kind };
  if (!equivalent) return NO_MATCH;
  for (const other of context.equivalents(attributes.resource)) {
    if (rules.some((rule) => admissionRuleMatches(rule, attributes, other.resource))) return { matches: true, resource: other.resource, kind: other.kind };
  }
  return NO_MATCH;
}

/** The object selector matches the new object or the old one (so a DELETE is selected by what is deleted). */
export function objectSelectorMatches(selector: LabelSelectorMatcher, attributes: AdmissionMatchAttributes): boolean {
  if (selector.empty) return true;
  const matchesObject = (object: KubeObject | undefined) => object != null && selector.matches(object.metadata?.labels);
  return matchesObject(attributes.object) || matchesObject(attributes.oldObject);
}

/**
 * The namespace selector looks at the labels of the request's namespace. A cluster-scoped object other than a
 * Namespace is in no namespace, so no namespace selector leaves it out; a Namespace being created or updated is
 * matched by its own new labels.
 */
export async function namespaceSelectorMatches(
  selector: LabelSelectorMatcher,
  attributes: AdmissionMatchAttributes,
  context: Pick<AdmissionMatchContext, 'namespaceLabels'>,
): Promise<boolean> {
  if (selector.empty) return true;
  const isNamespace = isNamespaceResource(attributes.resource);
  if (attributes.namespace === '' && !isNamespace) return true;
  if (isNamespace && !attributes.subresource && (attributes.operation === 'CREATE' || attributes.operation === 'UPDATE'))
    return selector.matches(attributes.object?.metadata?.labels);
  return selector.matches(await context.namespaceLabels(isNamespace ? attributes.name : attributes.namespace));
}
