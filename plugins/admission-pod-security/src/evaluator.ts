import { CHECKS, type CheckDefinition, type PodCheck, type PodView, type Violation } from './checks/index.js';
import { effectiveMinor, type LevelVersion } from './policy.js';

/**
 * Runs the checks of a level at a policy version. The checks that apply at each level and minor are worked out
 * once: for each check, its latest revision at that minor (none before its first), and at restricted, every
 * baseline check a restricted revision does not override.
 */
export class PolicyEvaluator {
  private readonly plans = new Map<string, PodCheck[]>();

  constructor(private readonly checks: readonly CheckDefinition[] = CHECKS) {}

  /** The violations of `pod` at `lv`, in message order; empty when the pod passes. */
  evaluate(lv: LevelVersion, pod: PodView): Violation[] {
    if (lv.level === 'privileged') return [];
    const violations: Violation[] = [];
    for (const check of this.plan(lv.level, effectiveMinor(lv.version))) {
      const violation = check(pod);
      if (violation) violations.push(violation);
    }
    return violations;
  }

  private plan(level: 'baseline' | 'restricted', minor: number): PodCheck[] {
    const key = `${level}:${minor}`;
    let plan = this.plans.get(key);
    if (!plan) {
      plan = planChecks(this.checks, level, minor);
      this.plans.set(key, plan);
    }
    return plan;
  }
}

function planChecks(checks: readonly CheckDefinition[], level: 'baseline' | 'restricted', minor: number): PodCheck[] {
  const current = checks
    .filter((check) => check.level === 'baseline' || level === 'restricted')
    .map((check) => ({ id: check.id, revision: check.revisions.findLast((revision) => revision.since <= minor) }))
    .filter((entry) => entry.revision !== undefined);
  const overridden = new Set(current.flatMap((entry) => entry.revision!.overrides ?? []));
  return current.filter((entry) => !overridden.has(entry.id)).map((entry) => entry.revision!.check);
}

/** `reason (detail), reason (detail)`: the violations as the refusal and the warnings list them. */
export const describeViolations = (violations: readonly Violation[]): string =>
  violations.map((violation) => (violation.detail ? `${violation.reason} (${violation.detail})` : violation.reason)).join(', ');

/** The reasons alone (`privileged, runAsNonRoot != true`), as a namespace's existing pods are summarised. */
export const violationReasons = (violations: readonly Violation[]): string => violations.map((violation) => violation.reason).join(', ');
