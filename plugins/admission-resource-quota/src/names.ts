import type { UserInfo } from '@skiff/api';

export const PLUGIN_NAME = '@skiff/plugin-admission-resource-quota';

/**
 * Who writes the quota charges (ResourceQuota status) through the loopback client. Its uid tells the
 * plugin's own writes from everyone else's, which wait their turn behind the namespace's charges.
 */
export const QUOTA_ADMISSION_USER: UserInfo = Object.freeze({
  username: 'system:apiserver',
  uid: 'skiff:resourcequota-admission',
  groups: ['system:masters', 'system:authenticated'],
});
