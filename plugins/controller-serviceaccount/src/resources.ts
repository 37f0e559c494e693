import type { KubeObject, ResourceType } from '@skiff/api';

export const SERVICE_ACCOUNTS: ResourceType = { group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true };

export interface ServiceAccount extends KubeObject {
  secrets?: { name?: string }[];
  imagePullSecrets?: { name?: string }[];
  automountServiceAccountToken?: boolean;
}
