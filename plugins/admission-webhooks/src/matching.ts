// Which requests a webhook is called for: its rules (operations, groups, versions, resources with their
// subresources, scope), matchPolicy Equivalent trying the other versions the API server serves the resource
// in, the object selector and the namespace selector.
import { labelSelectorFromObject, type KubeObject, type LabelSelector, type LabelSelectorMatcher, type RuleWithOperations } from '@skiff/api';
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

/** The matching half of a webhook, compiled once per configuration version. */
export interface WebhookMatcher {
  rules: readonly RuleWithOperations[];
  /** False for matchPolicy Exact; Equivalent (the default) also matches the resource's other served versions. */
  equivalent: boolean;
  namespaceSelector: LabelSelectorMatcher;
  objectSelector: LabelSelectorMatcher;
}

/** What matching needs from the cluster. */
export interface MatchContext {
  /** The labels of a namespace (undefined when it has none, or does not exist). */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  /** The other versions the API server serves a resource in, with the kind in each (for matchPolicy Equivalent). */
  equivalents(resource: GroupVersionResource): { resource: GroupVersionResource; kind: GroupVersionKind }[];
}

/** A match, and the resource and kind it matched as (another version when matched as an equivalent). */
export type MatchResult = { matches: false } | { matches: true; resource: GroupVersionResource; kind: GroupVersionKind };

const NO_MATCH: MatchResult = { matches: false };

/** A left-out selector selects everything, as the API server's defaulting (`{}`) has it. */
export function compileMatcher(webhook: {
  rules?: RuleWithOperations[];
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
}): WebhookMatcher {
  return {
    rules: webhook.rules ?? [],
    equivalent: webhook.matchPolicy !== 'Exact',
    namespaceSelector: labelSelectorFromObject(webhook.namespaceSelector ?? {}),
    objectSelector: labelSelectorFromObject(webhook.objectSelector ?? {}),
  };
}

const anyOr = (patterns: readonly string[] | undefined, value: string) => (patterns ?? []).some((p) => p === '*' || p === value);

/**
 * Whether `pattern` names the resource and subresource: `pods` (the object only), `pods/status`, `pods/*`
 * (pods and every subresource of pods), `*` (every resource, no subresource), `*\/scale`, `*\/*` (everything).
 */
export function resourcePatternMatches(pattern: string, resource: string, subresource: string): boolean {
  const slash = pattern.indexOf('/');
  const res = slash < 0 ? pattern : pattern.slice(0, slash);
  const sub = slash < 0 ? '' : pattern.slice(slash + 1);
  if (res !== '*' && res !== resource) return false;
  return sub === '*' || sub === subresource;
}

const isNamespaceResource = (resource: GroupVersionResource) => resource.group === '' && resource.resource === 'namespaces';

/** Whether a rule's scope covers the request; a Namespace object is cluster-scoped. */
function scopeMatches(scope: string | undefined, attributes: MatchAttributes, resource: GroupVersionResource): boolean {
  if (scope === undefined || scope === '*') return true;
  const clusterScoped = isNamespaceResource(resource) || attributes.namespace === '';
  return scope === 'Cluster' ? clusterScoped : !clusterScoped;
}

/** Whether one rule selects the request, taken as a request for `resource`. */
export function ruleMatches(rule: RuleWithOperations, attributes: MatchAttributes, resource: GroupVersionResource = attributes.resource): boolean {
  return (
    anyOr(rule.operations, attributes.operation) &&
    anyOr(rule.apiGroups, resource.group) &&
    anyOr(rule.apiVersions, resource.version) &&
    (rule.resources ?? []).some((pattern) => resourcePatternMatches(pattern, resource.resource, attributes.subresource)) &&
    scopeMatches(rule.scope, attributes, resource)
  );
}

/** The resource and kind the rules select the request as: itself, or (Equivalent) another served version. */
export function matchRules(matcher: WebhookMatcher, attributes: MatchAttributes, context: Pick<MatchContext, 'equivalents'>): MatchResult {
  if (matcher.rules.some((rule) => ruleMatches(rule, attributes))) return { matches: true, resource: attributes.resource, kind: attributes.kind };
  if (!matcher.equivalent) return NO_MATCH;
  for (const other of context.equivalents(attributes.resource)) {
    if (matcher.rules.some((rule) => ruleMatches(rule, attributes, other.resource))) return { matches: true, resource: other.resource, kind: other.kind };
  }
  return NO_MATCH;
}

/** The object selector matches the new object or the old one (so a DELETE is selected by what is deleted). */
export function objectMatches(selector: LabelSelectorMatcher, attributes: MatchAttributes): boolean {
  if (selector.empty) return true;
  const matchesObject = (object: KubeObject | undefined) => object != null && selector.matches(object.metadata?.labels);
  return matchesObject(attributes.object) || matchesObject(attributes.oldObject);
}

/**
 * The namespace selector looks at the labels of the request's namespace. A cluster-scoped object other than a
 * Namespace is in no namespace, so no namespace selector leaves it out; a Namespace being created or updated
 * is matched by its own new labels.
 */
export async function namespaceMatches(
  selector: LabelSelectorMatcher,
  attributes: MatchAttributes,
  context: Pick<MatchContext, 'namespaceLabels'>,
): Promise<boolean> {
  if (selector.empty) return true;
  const isNamespace = isNamespaceResource(attributes.resource);
  if (attributes.namespace === '' && !isNamespace) return true;
  if (isNamespace && !attributes.subresource && (attributes.operation === 'CREATE' || attributes.operation === 'UPDATE'))
    return selector.matches(attributes.object?.metadata?.labels);
  return selector.matches(await context.namespaceLabels(isNamespace ? attributes.name : attributes.namespace));
}

/** Whether the webhook is called for the request, and as which resource and kind. */
export async function matchWebhook(matcher: WebhookMatcher, attributes: MatchAttributes, context: MatchContext): Promise<MatchResult> {
  const byRules = matchRules(matcher, attributes, context);
  if (!byRules.matches) return NO_MATCH;
  if (!objectMatches(matcher.objectSelector, attributes)) return NO_MATCH;
  if (!(await namespaceMatches(matcher.namespaceSelector, attributes, context))) return NO_MATCH;
  return byRules;
}
