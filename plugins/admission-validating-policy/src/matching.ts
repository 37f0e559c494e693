// Which requests a policy's matchConstraints, and a binding's matchResources, select: resource rules (with
// excludeResourceRules taking precedence), matchPolicy, the namespace selector and the object selector — read as
// @skiff/api's admission matching reads them (admission webhooks read their rules the same way).
import {
  admissionRuleMatches,
  labelSelectorFromObject,
  matchAdmissionRules,
  namespaceSelectorMatches,
  objectSelectorMatches,
  type AdmissionMatchAttributes,
  type AdmissionMatchContext,
  type AdmissionMatchResult,
  type MatchResources,
} from '@skiff/api';

export type { GroupVersionKind, GroupVersionResource } from '@skiff/api';
export type MatchAttributes = AdmissionMatchAttributes;
/** What matching needs from the cluster; `namespaceLabels` throws when there is no such namespace. */
export type MatchContext = AdmissionMatchContext;
export type MatchResult = AdmissionMatchResult;
export { admissionRuleMatches as ruleMatches };

const NO_MATCH: MatchResult = { matches: false };

/**
 * Whether `criteria` select the request. Resource rules left empty select every resource (a binding's
 * matchResources narrows its policy's constraints only where it says something). A selector that cannot be
 * evaluated (a namespace that does not exist) throws: a configuration error. A selector left out selects
 * everything, as the API server's defaulting (`{}`) has it.
 */
export async function matchResources(criteria: MatchResources | undefined, attributes: MatchAttributes, context: MatchContext): Promise<MatchResult> {
  const all: MatchResult = { matches: true, resource: attributes.resource, kind: attributes.kind };
  if (!criteria) return all;
  if (!objectSelectorMatches(labelSelectorFromObject(criteria.objectSelector ?? {}), attributes)) return NO_MATCH;
  if (!(await namespaceSelectorMatches(labelSelectorFromObject(criteria.namespaceSelector ?? {}), attributes, context))) return NO_MATCH;
  const equivalent = criteria.matchPolicy !== 'Exact';
  if (matchAdmissionRules(criteria.excludeResourceRules ?? [], equivalent, attributes, context).matches) return NO_MATCH;
  const rules = criteria.resourceRules ?? [];
  return rules.length === 0 ? all : matchAdmissionRules(rules, equivalent, attributes, context);
}
