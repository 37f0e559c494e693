import type { AuthzAttributes } from '@skiff/kernel';

/** One rule of a Role or ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const has = (list: readonly string[] | undefined, value: string): boolean => !!list && (list.includes('*') || list.includes(value));

/** Whether `rule` allows the request, as RBAC reads a rule: verbs, groups, `resource/subresource`, names, paths. */
export function ruleAllows(rule: PolicyRule, attributes: AuthzAttributes): boolean {
  if (!has(rule.verbs, attributes.verb)) return false;
  if (!attributes.isResourceRequest) {
    const path = attributes.path;
    return !!rule.nonResourceURLs?.some((url) => url === '*' || url === path || (url.endsWith('*') && path.startsWith(url.slice(0, -1))));
  }
  if (!has(rule.apiGroups, attributes.apiGroup)) return false;
  const resources = rule.resources;
  if (!resources) return false;
  const sub = attributes.subresource;
  const combined = sub ? `${attributes.resource}/${sub}` : attributes.resource;
  if (!resources.includes('*') && !resources.includes(combined) && !(sub && resources.includes(`*/${sub}`))) return false;
  return !rule.resourceNames?.length || (attributes.name !== '' && rule.resourceNames.includes(attributes.name));
}

/**
 * Whether the rules `owned` cover everything `requested` grants (upstream's "no escalation" check): each
 * combination of verb, group, resource and name of `requested` must be allowed by one owned rule, a `*` only by a
 * `*`.
 */
export function uncoveredRules(owned: readonly PolicyRule[], requested: readonly PolicyRule[]): PolicyRule[] {
  const covers = (list: readonly string[] | undefined, value: string) => !!list && (list.includes('*') || list.includes(value));
  const missing: PolicyRule[] = [];
  for (const rule of requested) {
    for (const verb of rule.verbs ?? []) {
      if (rule.nonResourceURLs?.length) {
        for (const url of rule.nonResourceURLs) {
          const ok = owned.some(
            (mine) =>
              covers(mine.verbs, verb) &&
              !!mine.nonResourceURLs?.some((path) => path === '*' || path === url || (path.endsWith('*') && url.startsWith(path.slice(0, -1)))),
          );
          if (!ok) missing.push({ verbs: [verb], nonResourceURLs: [url] });
        }
        continue;
      }
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          const names = rule.resourceNames?.length ? rule.resourceNames : [undefined];
          for (const name of names) {
            const ok = owned.some((mine) => {
              if (!covers(mine.verbs, verb) || !covers(mine.apiGroups, group)) return false;
              const slash = resource.indexOf('/');
              const resourceOk = covers(mine.resources, resource) || (slash > 0 && (mine.resources ?? []).includes(`*${resource.slice(slash)}`));
              if (!resourceOk) return false;
              return !mine.resourceNames?.length || (name !== undefined && mine.resourceNames.includes(name));
            });
            if (!ok) missing.push({ verbs: [verb], apiGroups: [group], resources: [resource], ...(name !== undefined ? { resourceNames: [name] } : {}) });
          }
        }
      }
    }
  }
  return missing;
}

/** A rule as upstream prints it in an escalation refusal: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`. */
export function describeRule(rule: PolicyRule): string {
  const list = (values: string[]) => `[${values.map((value) => JSON.stringify(value)).join(' ')}]`;
  const parts: string[] = [];
  if (rule.apiGroups) parts.push(`APIGroups:${list(rule.apiGroups)}`);
  if (rule.resources) parts.push(`Resources:${list(rule.resources)}`);
  if (rule.resourceNames) parts.push(`ResourceNames:${list(rule.resourceNames)}`);
  if (rule.nonResourceURLs) parts.push(`NonResourceURLs:${list(rule.nonResourceURLs)}`);
  parts.push(`Verbs:${list(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}
