import type { Container, Job, OwnerReference, Pod } from '@skiff/api';
import { COMPLETION_INDEX_ENV, JOB_LABEL, JOB_TRACKING_FINALIZER } from './names.js';

/** Generated names are the prefix plus 5 random characters and must stay within 63. */
const MAX_GENERATE_NAME_PREFIX = 58;

/** `<job>-<index>-`, the job name cut short if the whole would be too long for a pod name. */
export function indexedGenerateName(jobName: string, index: number): string {
  const suffix = `-${index}-`;
  const prefix = `${jobName}${suffix}`;
  return prefix.length <= MAX_GENERATE_NAME_PREFIX ? prefix : `${jobName.slice(0, MAX_GENERATE_NAME_PREFIX - suffix.length)}${suffix}`;
}

function withIndexEnv(container: Container): Container {
  const env = (container.env ?? []).filter((variable) => variable.name !== COMPLETION_INDEX_ENV);
  env.unshift({ name: COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_LABEL.COMPLETION_INDEX}']` } } });
  return { ...{}, ...container, env };
}

/**
 * A new pod for a Job: the template's labels, annotations and spec, owned by the Job and held by the
 * job-tracking finalizer until it has been counted. Pods of Indexed Jobs carry their index (annotation,
 * label, JOB_COMPLETION_INDEX) and get the hostname `<job>-<index>`.
 */
export function podForJob(job: Job, controllerRef: OwnerReference, index?: number): Pod {
  const template = structuredClone(job.spec.template);
  const metadata: Pod['metadata'] = {
    generateName: index === undefined ? `${job.metadata.name}-` : indexedGenerateName(job.metadata.name!, index),
    namespace: job.metadata.namespace,
    ownerReferences: [controllerRef],
    finalizers: [...(template.metadata?.finalizers ?? []).filter((finalizer) => finalizer !== JOB_TRACKING_FINALIZER), JOB_TRACKING_FINALIZER],
  };
  if (template.metadata?.labels) metadata.labels = template.metadata.labels;
  if (template.metadata?.annotations) metadata.annotations = template.metadata.annotations;
  const spec = template.spec;
  if (index !== undefined) {
    metadata.annotations = { ...{}, ...metadata.annotations, [JOB_LABEL.COMPLETION_INDEX]: String(index) };
    metadata.labels = { ...{}, ...metadata.labels, [JOB_LABEL.COMPLETION_INDEX]: String(index) };
    spec.hostname = `${job.metadata.name}-${index}`;
    spec.containers = spec.containers.map(withIndexEnv);
    if (spec.initContainers) spec.initContainers = spec.initContainers.map(withIndexEnv);
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}
