import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { AuditEvent, AuditStage } from '@skiff/kernel';

export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export const LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
/** The stages a policy may name. Skiff sends no ResponseStarted events (watches end with ResponseComplete), but
 * policies written for kube-apiserver often omit that stage, so it is accepted (and omitting it changes nothing). */
const STAGES: readonly string[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

export interface GroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

/** One rule of an audit.k8s.io/v1 Policy: every field given must match; the first matching rule sets the level. */
export interface PolicyRule {
  level: AuditLevel;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

/** What the cluster records when no policy is given: every request's metadata, once it is answered. */
export const DEFAULT_POLICY: Policy = Object.freeze({ omitStages: ['RequestReceived'], rules: [{ level: 'Metadata' }] }) as Policy;

export class PolicyError extends Error {}

function strings(value: unknown, at: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) throw new PolicyError(`${at}: expected a list of strings`);
  return value as string[];
}

function stages(value: unknown, at: string): AuditStage[] | undefined {
  const list = strings(value, at);
  const bad = list?.find((stage) => !STAGES.includes(stage));
  if (bad !== undefined) throw new PolicyError(`${at}: unknown stage ${JSON.stringify(bad)} (expected one of ${STAGES.join(', ')})`);
  return list as AuditStage[] | undefined;
}

/** A Policy document (kind Policy, apiVersion audit.k8s.io/v1), or its rules alone, checked field by field. */
export function parsePolicy(document: unknown, source = 'policy'): Policy {
  if (typeof document !== 'object' || document === null) throw new PolicyError(`${source}: expected an audit Policy object`);
  const { kind, apiVersion, rules, omitStages, omitManagedFields } = document as Record<string, unknown>;
  if (kind !== undefined && kind !== 'Policy') throw new PolicyError(`${source}: kind must be Policy`);
  if (apiVersion !== undefined && apiVersion !== 'audit.k8s.io/v1') throw new PolicyError(`${source}: apiVersion must be audit.k8s.io/v1`);
  if (!Array.isArray(rules) || rules.length === 0) throw new PolicyError(`${source}: rules: at least one rule is required`);
  return {
    omitStages: stages(omitStages, `${source}: omitStages`),
    omitManagedFields: omitManagedFields === true,
    rules: rules.map((rule: unknown, index): PolicyRule => {
      const at = `${source}: rules[${index}]`;
      if (typeof rule !== 'object' || rule === null) throw new PolicyError(`${at}: expected an object`);
      const r = rule as Record<string, unknown>;
      if (!LEVELS.includes(r.level as AuditLevel)) throw new PolicyError(`${at}.level: expected one of ${LEVELS.join(', ')}`);
      const resources = r.resources;
      if (resources !== undefined && !Array.isArray(resources)) throw new PolicyError(`${at}.resources: expected a list`);
      if (resources && r.nonResourceURLs) throw new PolicyError(`${at}: resources and nonResourceURLs exclude each other`);
      return {
        level: r.level as AuditLevel,
        users: strings(r.users, `${at}.users`),
        userGroups: strings(r.userGroups, `${at}.userGroups`),
        verbs: strings(r.verbs, `${at}.verbs`),
        namespaces: strings(r.namespaces, `${at}.namespaces`),
        nonResourceURLs: strings(r.nonResourceURLs, `${at}.nonResourceURLs`),
        omitStages: stages(r.omitStages, `${at}.omitStages`),
        ...(typeof r.omitManagedFields === 'boolean' ? { omitManagedFields: r.omitManagedFields } : {}),
        resources: (resources as unknown[] | undefined)?.map((entry, i) => {
          const e = (entry ?? {}) as Record<string, unknown>;
          if (e.group !== undefined && typeof e.group !== 'string') throw new PolicyError(`${at}.resources[${i}].group: expected a string`);
          return {
            group: e.group as string | undefined,
            resources: strings(e.resources, `${at}.resources[${i}].resources`),
            resourceNames: strings(e.resourceNames, `${at}.resources[${i}].resourceNames`),
          };
        }),
      };
    }),
  };
}

export function readPolicyFile(file: string): Policy {
  let document: unknown;
  try {
    document = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    // One line: the YAML parser's message goes on to quote the offending line.
    throw new PolicyError(`${file}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(/:$/, '')}`);
  }
  return parsePolicy(document, file);
}

function matchesResource(entry: GroupResources, event: AuditEvent): boolean {
  const ref = event.objectRef!;
  if ((entry.group ?? '') !== (ref.apiGroup ?? '')) return false;
  // As kube-apiserver's policy checker: a group without resources matches all of it, resourceNames then unread;
  // `pods/*` matches pods and every subresource of pods.
  if (!entry.resources?.length) return true;
  if (entry.resourceNames?.length && !entry.resourceNames.includes(ref.name ?? '')) return false;
  const full = ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource;
  return entry.resources.some(
    (pattern) => pattern === full || pattern === '*' || pattern === `${ref.resource}/*` || (pattern === `*/${ref.subresource}` && ref.subresource),
  );
}

function matchesPath(patterns: string[], path: string): boolean {
  return patterns.some((pattern) => (pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : pattern === path));
}

/** The first rule that matches the event, as kube-apiserver's policy checker picks it; undefined: level None. */
export function ruleFor(policy: Policy, event: AuditEvent, path: string): PolicyRule | undefined {
  const user = event.user;
  return policy.rules.find((rule) => {
    if (rule.users?.length && !rule.users.includes(user?.username ?? '')) return false;
    if (rule.userGroups?.length && !rule.userGroups.some((group) => user?.groups.includes(group))) return false;
    if (rule.verbs?.length && !rule.verbs.includes(event.verb)) return false;
    if (event.objectRef) {
      if (rule.nonResourceURLs?.length) return false;
      if (rule.namespaces?.length && !rule.namespaces.includes(event.objectRef.namespace ?? '')) return false;
      if (rule.resources?.length && !rule.resources.some((entry) => matchesResource(entry, event))) return false;
    } else {
      if (rule.resources?.length || rule.namespaces?.length) return false;
      if (rule.nonResourceURLs?.length && !matchesPath(rule.nonResourceURLs, path)) return false;
    }
    return true;
  });
}
