// Which requests a webhook is called for: its rules, matchPolicy, object selector and namespace selector, read as
// @skiff/api's admission matching reads them (ValidatingAdmissionPolicy reads its rules the same way).
import {
  admissionRuleMatches,
  labelSelectorFromObject,
  matchAdmissionRules,
  namespaceSelectorMatches,
  objectSelectorMatches,
  resourcePatternMatches,
  type AdmissionMatchAttributes,
  type AdmissionMatchContext,
  type AdmissionMatchResult,
  type LabelSelector,
  type LabelSelectorMatcher,
  type RuleWithOperations,
} from '@skiff/api';

export type { GroupVersionKind, GroupVersionResource } from '@skiff/api';
export type MatchAttributes = AdmissionMatchAttributes;
export type MatchContext = AdmissionMatchContext;
export type MatchResult = AdmissionMatchResult;
export { admissionRuleMatches as ruleMatches, resourcePatternMatches };

/** The matching half of a webhook, compiled once per configuration version. */
export interface WebhookMatcher {
  rules: readonly RuleWithOperations[];
  /** False for matchPolicy Exact; Equivalent (the default) also matches the resource's other served versions. */
  equivalent: boolean;
  namespaceSelector: LabelSelectorMatcher;
  objectSelector: LabelSelectorMatcher;
}

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

/** Whether the webhook is called for the request, and as which resource and kind. */
export async function matchWebhook(matcher: WebhookMatcher, attributes: MatchAttributes, context: MatchContext): Promise<MatchResult> {
  const byRules = matchAdmissionRules(matcher.rules, matcher.equivalent, attributes, context);
  if (!byRules.matches) return byRules;
  if (!objectSelectorMatches(matcher.objectSelector, attributes)) return { matches: false };
  if (!(await namespaceSelectorMatches(matcher.namespaceSelector, attributes, context))) return { matches: false };
  return byRules;
}
