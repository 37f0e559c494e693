// LimitRanges and ResourceQuotas: what a namespace's pods may ask for, one at a time and together.
import { defineKind, RESOURCES, type LimitRange, type ResourceQuota } from '@skiff/api';
import { AGE_COLUMN, column, computed } from '../columns.js';

export const limitRanges = defineKind<LimitRange>({
  ...{},
  ...RESOURCES.limitranges,
  columns: [column('Created At', '.metadata.creationTimestamp', { type: 'date' })],
});

/** "cpu: 1/2, pods: 3/10": used over hard for the resources of one kind of limit. */
function quotaCell(quota: ResourceQuota, prefix: 'requests' | 'limits'): string {
  const hard = quota.status?.hard ?? quota.spec?.hard ?? {};
  const used = quota.status?.used ?? {};
  const keys = Object.keys(hard)
    .filter((key) => (prefix === 'limits' ? key.startsWith('limits.') : !key.startsWith('limits.')))
    .sort();
  return keys.map((key) => `${key}: ${String(used[key] ?? '0')}/${String(hard[key])}`).join(', ');
}

export const resourceQuotas = defineKind<ResourceQuota>({
  ...{},
  ...RESOURCES.resourcequotas,
  subresources: ['status'],
  columns: [
    AGE_COLUMN,
    computed<ResourceQuota>('Request', (quota) => quotaCell(quota, 'requests')),
    computed<ResourceQuota>('Limit', (quota) => quotaCell(quota, 'limits')),
  ],
});
