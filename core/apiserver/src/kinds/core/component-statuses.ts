// ComponentStatuses: read-only health reports of the control plane's components.
import { defineKind, RESOURCES, type ComponentStatus } from '@skiff/api';
import { computed } from '../columns.js';

export const componentStatuses = defineKind<ComponentStatus>({
  ...{},
  ...RESOURCES.componentstatuses,
  verbs: ['get', 'list'],
  columns: [
    computed<ComponentStatus>('Status', (cs) => (cs.conditions?.find((c) => c.type === 'Healthy')?.status === 'True' ? 'Healthy' : 'Unhealthy')),
    computed<ComponentStatus>('Message', (cs) => cs.conditions?.[0]?.message ?? ''),
    computed<ComponentStatus>('Error', (cs) => cs.conditions?.[0]?.error ?? ''),
  ],
});
