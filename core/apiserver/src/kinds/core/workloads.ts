// PodTemplates and ReplicationControllers: pod templates on their own, and kept at a replica count.
import { defineKind, RESOURCES, type PodTemplate, type ReplicationController, type StatusCause } from '@skiff/api';
import { defaultPodTemplate, fieldErrors, validatePodTemplateSpec } from '@skiff/api/validation';
import { AGE_COLUMN, column, computed, selectorCell, templateColumns } from '../columns.js';

export const podTemplates = defineKind<PodTemplate>({
  ...{},
  ...RESOURCES.podtemplates,
  columns: [
    computed<PodTemplate>('Containers', (t) => (t.template?.spec?.containers ?? []).map((c) => c.name).join(',')),
    computed<PodTemplate>('Images', (t) => (t.template?.spec?.containers ?? []).map((c) => c.image ?? '').join(',')),
    computed<PodTemplate>(
      'Pod Labels',
      (t) =>
        Object.entries(t.template?.metadata?.labels ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .sort()
          .join(',') || '<none>',
    ),
  ],
  strategy: {
    defaults: (t) => defaultPodTemplate(t.template),
    validate: (t) => validatePodTemplateSpec(t.template, 'template'),
  },
});

export const replicationControllers = defineKind<ReplicationController>({
  ...{},
  ...RESOURCES.replicationcontrollers,
  subresources: ['status', 'scale'],
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
  columns: [
    column('Desired', '.spec.replicas', { type: 'integer' }),
    computed<ReplicationController>('Current', (rc) => rc.status?.replicas ?? 0, { type: 'integer' }),
    computed<ReplicationController>('Ready', (rc) => rc.status?.readyReplicas ?? 0, { type: 'integer' }),
    AGE_COLUMN,
    ...templateColumns('.spec.template'),
    computed<ReplicationController>('Selector', (rc) => selectorCell({ matchLabels: rc.spec?.selector }), { priority: 1 }),
  ],
  strategy: {
    // A missing selector and labels come from the template's labels, and one replica by default.
    defaults(rc) {
      const spec = (rc.spec ??= {});
      const labels = spec.template?.metadata?.labels;
      if (labels && !spec.selector) spec.selector = { ...labels };
      if (labels && !rc.metadata.labels) rc.metadata.labels = { ...labels };
      spec.replicas ??= 1;
      defaultPodTemplate(spec.template);
    },
    prepareForCreate(rc) {
      rc.status = { replicas: 0 };
    },
    validate(rc) {
      const causes: StatusCause[] = [];
      const selector = rc.spec?.selector ?? {};
      if (Object.keys(selector).length === 0) causes.push(fieldErrors.required('spec.selector'));
      const labels = rc.spec?.template?.metadata?.labels ?? {};
      if (Object.entries(selector).some(([key, value]) => labels[key] !== value)) {
        causes.push(fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
      }
      if ((rc.spec?.replicas ?? 0) < 0) causes.push(fieldErrors.invalid('spec.replicas', rc.spec?.replicas, 'must be greater than or equal to 0'));
      causes.push(...validatePodTemplateSpec(rc.spec?.template, 'spec.template'));
      return causes;
    },
  },
});
