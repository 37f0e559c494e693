import type { KubeObject, Namespace, Pod, StatusCause } from '@skiff/api';
import type { AdmissionRequest } from '@skiff/kernel';
import type { PodView, Violation } from './checks/index.js';
import { invalidLabels as invalidLabelsError, PodSecurityForbidden } from './errors.js';
import { describeViolations, PolicyEvaluator, violationReasons } from './evaluator.js';
import { AUDIT_ANNOTATIONS, IGNORED_POD_SUBRESOURCES, LABELS, NAMESPACE_POD_CHECK_LIMIT, NAMESPACE_POD_CHECK_TIMEOUT_MS } from './names.js';
import type { PodSecurityConfig } from './options.js';
import { isSignificantPodUpdate, podView, templateView, WORKLOAD_TEMPLATES } from './pod-specs.js';
import {
  aggregateCauses,
  describe,
  equivalent,
  fullyPrivileged,
  MODES,
  policyFromLabels,
  strictness,
  type LabelledPolicy,
  type LevelVersion,
  type Policy,
} from './policy.js';

/** The pods of a namespace, as stored (a namespace's new enforce level is checked against them). */
export type PodLister = (namespace: string) => Promise<readonly Pod[]>;

const NAMESPACES = { group: '', resource: 'namespaces' };

/**
 * Pod Security admission: pods are checked against their namespace's policy (enforce refuses, audit annotates the
 * audit event, warn answers with warnings), workloads' pod templates in audit and warn modes only, and namespace
 * labels are validated, with a warning naming the existing pods a stricter enforce level would refuse.
 */
export class PodSecurityAdmission {
  constructor(
    private readonly config: PodSecurityConfig,
    private readonly listPods: PodLister,
    private readonly evaluator = new PolicyEvaluator(),
  ) {}

  async validate(request: AdmissionRequest): Promise<void> {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return;
    const { group, resource } = request.resource;
    if (group === '' && resource === 'namespaces') return this.validateNamespace(request);
    if (group === '' && resource === 'pods') return this.validatePod(request);
    if (WORKLOAD_TEMPLATES.has(`${resource}.${group}`)) return this.validateWorkload(request);
  }

  private async validatePod(request: AdmissionRequest): Promise<void> {
    if (IGNORED_POD_SUBRESOURCES.has(request.subresource) || request.object?.kind !== 'Pod') return;
    if (this.exempt(request)) return;
    const labelled = await this.namespacePolicy(request);
    if (labelled.errors.length === 0 && fullyPrivileged(labelled.policy)) {
      annotate(request, { [AUDIT_ANNOTATIONS.enforcePolicy]: describe({ level: 'privileged', version: 'latest' }) });
      return;
    }
    const pod = request.object as Pod;
    if (request.operation === 'UPDATE' && request.oldObject && !isSignificantPodUpdate(pod, request.oldObject as Pod)) return;
    this.evaluate(request, labelled, podView(pod), true);
  }

  private async validateWorkload(request: AdmissionRequest): Promise<void> {
    if (request.subresource || !request.object) return;
    if (this.exempt(request)) return;
    const labelled = await this.namespacePolicy(request);
    const { policy } = labelled;
    if (labelled.errors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const template = WORKLOAD_TEMPLATES.get(`${request.resource.resource}.${request.resource.group}`)!(request.object);
    const view = templateView(template);
    if (view) this.evaluate(request, labelled, view, false);
  }

  /** Exempt namespaces and users pass unchecked; the audit event says why. */
  private exempt(request: AdmissionRequest): boolean {
    const { namespaces, usernames } = this.config.exemptions;
    const reason = namespaces.has(request.namespace) ? 'namespace' : usernames.has(request.user.username) ? 'user' : undefined;
    if (reason) annotate(request, { [AUDIT_ANNOTATIONS.exempt]: reason });
    return reason !== undefined;
  }

  private async namespacePolicy(request: AdmissionRequest): Promise<LabelledPolicy> {
    const namespace = await request.get(NAMESPACES, '', request.namespace);
    return policyFromLabels(namespace?.metadata.labels, this.config.defaults);
  }

  /** Checks one pod (or template) in each mode; throws the refusal when `enforce` and the enforce level refuses it. */
  private evaluate(request: AdmissionRequest, { policy, errors }: LabelledPolicy, pod: PodView, enforce: boolean): void {
    const runtimeClass = pod.spec.runtimeClassName;
    if (runtimeClass && this.config.exemptions.runtimeClasses.has(runtimeClass)) {
      annotate(request, { [AUDIT_ANNOTATIONS.exempt]: 'runtimeClass' });
      return;
    }
    const annotations: Record<string, string> = {};
    if (errors.length) annotations[AUDIT_ANNOTATIONS.error] = `Failed to parse policy: ${aggregateCauses(errors)}`;
    const results = new Map<string, Violation[]>();
    const violations = (lv: LevelVersion) => {
      const key = describe(lv);
      let found = results.get(key);
      if (!found) results.set(key, (found = this.evaluator.evaluate(lv, pod)));
      return found;
    };
    let refusal: PodSecurityForbidden | undefined;
    if (enforce) {
      annotations[AUDIT_ANNOTATIONS.enforcePolicy] = describe(policy.enforce);
      const refused = violations(policy.enforce);
      if (refused.length)
        refusal = new PodSecurityForbidden({
          resource: request.resource.resource,
          name: request.name,
          policy: describe(policy.enforce),
          violations: describeViolations(refused),
        });
    }
    const audited = violations(policy.audit);
    if (audited.length)
      annotations[AUDIT_ANNOTATIONS.auditViolations] = `would violate PodSecurity "${describe(policy.audit)}": ${describeViolations(audited)}`;
    // A request that is refused gets the refusal alone, not a warning that repeats it.
    if (!refusal) {
      const warned = violations(policy.warn);
      if (warned.length) request.warnings?.push(`would violate PodSecurity "${describe(policy.warn)}": ${describeViolations(warned)}`);
    }
    annotate(request, annotations);
    if (refusal) throw refusal;
  }

  private async validateNamespace(request: AdmissionRequest): Promise<void> {
    if (request.subresource || !request.object) return;
    const namespace = request.object as Namespace;
    const name = namespace.metadata.name ?? request.name;
    const labels = namespace.metadata.labels;
    const { policy, errors } = policyFromLabels(labels, this.config.defaults);
    const exemptWarning = () => this.exemptNamespaceWarning(name, policy, labels ?? {});
    if (request.operation === 'CREATE') {
      if (errors.length) throw invalidLabels(name, errors);
      if (this.config.exemptions.namespaces.has(name)) pushWarning(request, exemptWarning());
      return;
    }
    const old = policyFromLabels((request.oldObject as KubeObject | undefined)?.metadata.labels, this.config.defaults);
    // Labels that were already wrong may stay so (a namespace made before the plugin was enabled can still be edited).
    if (errors.length && (old.errors.length === 0 || !sameCauses(errors, old.errors))) throw invalidLabels(name, errors);
    const before = old.policy.enforce;
    const after = policy.enforce;
    if (after.level === before.level && after.version === before.version) return;
    if (after.level === 'privileged') return;
    if (after.version === before.version && strictness(after.level) <= strictness(before.level)) return;
    if (this.config.exemptions.namespaces.has(name)) return pushWarning(request, exemptWarning());
    request.warnings?.push(...(await this.existingPodWarnings(name, after)));
  }

  /** Warnings naming the existing pods of `namespace` that `enforce` would refuse, grouped by what is wrong. */
  private async existingPodWarnings(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const deadline = Date.now() + NAMESPACE_POD_CHECK_TIMEOUT_MS;
    let pods: readonly Pod[];
    try {
      pods = this.prioritize(await this.listPods(namespace));
    } catch {
      return ['failed to list pods while checking new PodSecurity enforce level'];
    }
    const toCheck = pods.slice(0, NAMESPACE_POD_CHECK_LIMIT);
    const byReasons = new Map<string, { first: string; count: number }>();
    let checked = 0;
    for (const pod of toCheck) {
      checked++;
      const violations = this.evaluator.evaluate(enforce, podView(pod));
      if (violations.length) {
        const reasons = violationReasons(violations);
        const name = pod.metadata.name ?? '';
        const group = byReasons.get(reasons);
        if (!group) byReasons.set(reasons, { first: name, count: 1 });
        else {
          group.count++;
          if (name < group.first) group.first = name;
        }
      }
      if (Date.now() > deadline) break;
    }
    const warnings: string[] = [];
    if (checked < pods.length) warnings.push(`new PodSecurity enforce level only checked against the first ${checked} of ${pods.length} existing pods`);
    if (byReasons.size) warnings.push(`existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${describe(enforce)}"`);
    const perPods = [...byReasons].map(([reasons, { first, count }]) => `${first}${othersPhrase(count - 1)}: ${reasons}`);
    return [...warnings, ...perPods.sort()];
  }

  /** Pods of exempt runtime classes left out; one pod per controller first, its siblings after every other pod. */
  private prioritize(pods: readonly Pod[]): Pod[] {
    const first: Pod[] = [];
    const siblings: Pod[] = [];
    const controllers = new Set<string>();
    for (const pod of pods) {
      const runtimeClass = pod.spec?.runtimeClassName;
      if (runtimeClass && this.config.exemptions.runtimeClasses.has(runtimeClass)) continue;
      const controller = pod.metadata.ownerReferences?.find((owner) => owner.controller)?.uid;
      if (controller && controllers.has(controller)) siblings.push(pod);
      else {
        if (controller) controllers.add(controller);
        first.push(pod);
      }
    }
    return [...first, ...siblings];
  }

  /** Labels on an exempt namespace do nothing: said when they ask for more than the defaults. */
  private exemptNamespaceWarning(name: string, policy: Policy, labels: Readonly<Record<string, string>>): string | undefined {
    const { defaults } = this.config;
    if (fullyPrivileged(policy) || MODES.every((mode) => equivalent(policy[mode], defaults[mode]))) return undefined;
    const set = MODES.filter(
      (mode) => policy[mode].level !== 'privileged' && (labels[LABELS[mode]] !== undefined || labels[LABELS[`${mode}-version`]] !== undefined),
    ).map((mode) => `${mode}=${describe(policy[mode])}`);
    return `namespace "${name}" is exempt from Pod Security, and the policy (${set.join(', ')}) will be ignored`;
  }
}

function othersPhrase(others: number): string {
  if (others === 0) return '';
  return ` (and ${others} other ${others === 1 ? 'pod' : 'pods'})`;
}

function annotate(request: AdmissionRequest, annotations: Record<string, string>): void {
  if (request.auditAnnotations) Object.assign(request.auditAnnotations, annotations);
}

function pushWarning(request: AdmissionRequest, warning: string | undefined): void {
  if (warning) request.warnings?.push(warning);
}

const invalidLabels = (name: string, causes: StatusCause[]) => invalidLabelsError(name, causes, aggregateCauses(causes));

const sameCauses = (a: readonly StatusCause[], b: readonly StatusCause[]): boolean => JSON.stringify(a) === JSON.stringify(b);
