// apps/v1 ControllerRevisions: the snapshots StatefulSets and DaemonSets roll between.
import { defineKind, RESOURCES, type ControllerRevision, type StatusCause } from '@skiff/api';
import { fieldErrors, validateImmutable } from '@skiff/api/validation';
import { AGE_COLUMN, column, computed } from '../columns.js';

export const controllerRevisions = defineKind<ControllerRevision>({
  ...{},
  ...RESOURCES.controllerrevisions,
  columns: [
    computed('Controller', (cr) => {
      const owner = cr.metadata.ownerReferences?.find((ref) => ref.controller);
      return owner ? `${owner.kind.toLowerCase()}.${owner.apiVersion.split('/')[0]}/${owner.name}` : '<none>';
    }),
    column('Revision', '.revision', { type: 'integer' }),
    AGE_COLUMN,
  ],
  strategy: {
    validate(cr, old) {
      const causes: StatusCause[] = [];
      if ((cr.revision ?? 0) < 0) causes.push(fieldErrors.invalid('revision', cr.revision, 'must be greater than or equal to 0'));
      if (old) causes.push(...validateImmutable(cr.data, old.data, 'data'));
      return causes;
    },
  },
});
