// What StatefulSets and DaemonSets check and default alike.
import { type LabelSelector, type PodTemplateSpec, type StatusCause } from '@skiff/api';
import {
  defaultPodTemplate,
  fieldErrors,
  isEmptySelector,
  validateImmutable,
  validateLabelSelector,
  validateNonnegative,
  validatePodTemplateSpec,
} from '@skiff/api/validation';

/** The spec fields both kinds share (a DaemonSet has no replicas). */
interface WorkloadSpec {
  replicas?: number;
  selector?: LabelSelector;
  template?: PodTemplateSpec;
  revisionHistoryLimit?: number;
}

/** A non-empty selector that matches the template's labels, a valid template, and a selector fixed after creation. */
export function validateWorkload(workload: { spec?: WorkloadSpec }, old?: { spec?: WorkloadSpec }): StatusCause[] {
  const spec = workload.spec ?? {};
  const causes: StatusCause[] = [];
  if (!spec.selector) causes.push(fieldErrors.required('spec.selector'));
  else {
    causes.push(...validateLabelSelector(spec.selector, 'spec.selector'));
    if (isEmptySelector(spec.selector)) causes.push(fieldErrors.invalid('spec.selector', spec.selector, 'empty selector is invalid for deployment'));
    const labels = spec.template?.metadata?.labels ?? {};
    if (Object.entries(spec.selector.matchLabels ?? {}).some(([key, value]) => labels[key] !== value)) {
      causes.push(fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
    }
  }
  causes.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  causes.push(...validatePodTemplateSpec(spec.template, 'spec.template'));
  if (old) causes.push(...validateImmutable(spec.selector, old.spec?.selector, 'spec.selector'));
  return causes;
}

/** Ten old revisions kept, and the template's defaults. */
export function defaultWorkloadSpec(spec: WorkloadSpec): void {
  spec.revisionHistoryLimit ??= 10;
  defaultPodTemplate(spec.template);
}
