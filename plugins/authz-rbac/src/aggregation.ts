import { labelSelectorFromObject, RESOURCES } from '@skiff/api';
import type { ApiClient, Logger } from '@skiff/kernel';
import type { RbacPolicy, RoleObject } from './policy.js';
import type { PolicyRule } from './rules.js';

const ruleKey = (rule: PolicyRule) => JSON.stringify([rule.verbs, rule.apiGroups, rule.resources, rule.resourceNames, rule.nonResourceURLs]);

/** The rules an aggregated ClusterRole should hold: those of every other ClusterRole its selectors match, by role name. */
export function aggregatedRules(role: RoleObject, policy: RbacPolicy): PolicyRule[] {
  const selectors = (role.aggregationRule?.clusterRoleSelectors ?? []).map((selector) => labelSelectorFromObject(selector as never));
  const sources = [...policy.allClusterRoles()]
    .filter((other) => other.metadata.name !== role.metadata.name && selectors.some((selector) => !selector.empty && selector.matches(other.metadata.labels)))
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  const seen = new Set<string>();
  const rules: PolicyRule[] = [];
  for (const source of sources) {
    for (const rule of source.rules ?? []) {
      const key = ruleKey(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      rules.push(rule);
    }
  }
  return rules;
}

/**
 * The ClusterRole aggregation controller: after every change to the RBAC objects, each ClusterRole with an
 * `aggregationRule` is given the rules of the ClusterRoles its selectors match, written through the API as the
 * clusterrole-aggregation-controller ServiceAccount (which upstream's default bindings let escalate).
 */
export class AggregationController {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly policy: RbacPolicy,
    private readonly client: ApiClient,
    private readonly logger: Logger,
  ) {}

  /** Brings every aggregated role up to date; coalesces calls made while a pass runs. */
  sync(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && !this.stopped);
    })()
      .catch((err: unknown) => this.logger.warn({ err }, 'ClusterRole aggregation failed; retried at the next change'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  stop(): void {
    this.stopped = true;
  }

  private async pass(): Promise<void> {
    for (const role of [...this.policy.allClusterRoles()]) {
      if (!role.aggregationRule || this.stopped) continue;
      const rules = aggregatedRules(role, this.policy);
      if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) continue;
      await this.client.update(RESOURCES.clusterroles, { ...{}, ...role, rules });
    }
  }
}
