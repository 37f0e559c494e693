// What Deployments and ReplicaSets check alike: a selector that matches their pod template, the template
// itself, and the replica counts in their status.
import {
  labelSelectorFromObject,
  type LabelSelector,
  type LabelSelectorMatcher,
  type PodTemplateSpec,
  type ScaleDefinition,
  type StatusCause,
} from '@skiff/api';
import {
  fieldErrors,
  goLabelSelector,
  goStringMap,
  isEmptySelector,
  nameIsDNSSubdomain,
  validateLabelSelector,
  validateNonnegative,
  validatePodTemplateSpec,
  type ObjectMetaRules,
} from '@skiff/api/validation';

/** The scale subresource of the kinds that run `spec.replicas` copies of a pod template. */
export const REPLICAS_SCALE: ScaleDefinition = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.spec.selector',
};

/** Deployments and ReplicaSets validate their own metadata (their validation replaces the generic one). */
export const APPS_META_RULES: ObjectMetaRules = { namespaced: true, name: nameIsDNSSubdomain };

/** The compiled selector, or undefined when it cannot be compiled. */
function compile(selector: LabelSelector | undefined): LabelSelectorMatcher | undefined {
  try {
    return labelSelectorFromObject(selector);
  } catch {
    return undefined;
  }
}

/** Selector required, valid and non-empty; the template valid and matched by it. */
export function validateSelectorAndTemplate(selector: LabelSelector | undefined, template: PodTemplateSpec | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const selectorPath = `${field}.selector`;
  if (!selector) {
    causes.push(fieldErrors.required(selectorPath));
  } else {
    causes.push(...validateLabelSelector(selector, selectorPath));
    // Kubernetes says "deployment" here for ReplicaSets too.
    if (isEmptySelector(selector)) causes.push(fieldErrors.invalid(selectorPath, goLabelSelector(selector), 'empty selector is invalid for deployment'));
  }
  const matcher = compile(selector);
  if (!matcher) {
    causes.push(fieldErrors.invalid(selectorPath, goLabelSelector(selector), 'invalid label selector'));
    return causes;
  }
  const templatePath = `${field}.template`;
  const labels = template?.metadata?.labels;
  // A missing selector matches nothing, so it is also reported as not matching the template.
  if (!matcher.empty && !matcher.matches(labels)) {
    causes.push(fieldErrors.invalid(`${templatePath}.metadata.labels`, goStringMap(labels), '`selector` does not match template `labels`'));
  }
  causes.push(...validatePodTemplateSpec(template, templatePath));
  const restartPolicy = template?.spec?.restartPolicy ?? '';
  if (restartPolicy !== 'Always') causes.push(fieldErrors.notSupported(`${templatePath}.spec.restartPolicy`, restartPolicy, ['Always']));
  if (template?.spec?.activeDeadlineSeconds !== undefined) {
    causes.push(fieldErrors.forbidden(`${templatePath}.spec.activeDeadlineSeconds`, 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return causes;
}

/** The status counts the two kinds report (each reports some of them). */
type ReplicaCounts = Partial<
  Record<
    | 'observedGeneration'
    | 'replicas'
    | 'updatedReplicas'
    | 'readyReplicas'
    | 'availableReplicas'
    | 'unavailableReplicas'
    | 'fullyLabeledReplicas'
    | 'collisionCount',
    number
  >
>;

/** Every count non-negative; `counts` (but unavailableReplicas) at most status.replicas; no more available than ready. */
export function validateReplicaCounts(status: ReplicaCounts, counts: (keyof ReplicaCounts)[], field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const checked: (keyof ReplicaCounts)[] = ['observedGeneration', 'replicas', ...counts, 'collisionCount'];
  for (const name of checked) causes.push(...validateNonnegative(status[name], `${field}.${name}`));
  const replicas = status.replicas ?? 0;
  for (const name of counts) {
    if (name !== 'unavailableReplicas' && (status[name] ?? 0) > replicas)
      causes.push(fieldErrors.invalid(`${field}.${name}`, status[name], 'cannot be greater than status.replicas'));
  }
  if ((status.availableReplicas ?? 0) > (status.readyReplicas ?? 0)) {
    causes.push(fieldErrors.invalid(`${field}.availableReplicas`, status.availableReplicas, 'cannot be greater than readyReplicas'));
  }
  return causes;
}
