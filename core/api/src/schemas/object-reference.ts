import { objectsIn, t } from './language.js';

export const objectReferenceSchema = objectsIn('io.k8s.api.core.v1')(
  'ObjectReference',
  {
    kind: t.string('Kind of the referent.'),
    namespace: t.string('Namespace of the referent.'),
    name: t.string('Name of the referent.'),
    uid: t.string('UID of the referent.'),
    apiVersion: t.string('API version of the referent.'),
    resourceVersion: t.string('Specific resourceVersion to which this reference is made, if any.'),
    fieldPath: t.string(
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].',
    ),
  },
  'ObjectReference contains enough information to let you inspect or modify the referred object.',
);
