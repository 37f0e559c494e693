import { objectsIn, t } from './language.js';
import { objectMetaSchema, typeMetaFields } from './meta.js';

const object = objectsIn('io.k8s.api.autoscaling.v1');

/** autoscaling/v1 Scale: the body of the `scale` subresource. */
export const scaleSchema = object(
  'Scale',
  {
    ...typeMetaFields,
    metadata: objectMetaSchema,
    spec: object(
      'ScaleSpec',
      { replicas: t.int32('replicas is the desired number of instances for the scaled object.') },
      'ScaleSpec describes the attributes of a scale subresource.',
    ),
    status: object(
      'ScaleStatus',
      {
        replicas: t.int32('replicas is the actual number of observed instances of the scaled object.'),
        selector: t.string('selector is the label query over pods that should match the replicas count, in the same format as a label selector string.'),
      },
      'ScaleStatus represents the current status of a scale subresource.',
    ),
  },
  'Scale represents a scaling request for a resource.',
  { group: 'autoscaling', version: 'v1', kind: 'Scale' },
);
