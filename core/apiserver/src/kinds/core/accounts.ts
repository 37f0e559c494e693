// ServiceAccounts: the identities pods run as.
import { defineKind, RESOURCES, type ServiceAccount } from '@skiff/api';
import { AGE_COLUMN, computed } from '../columns.js';

export const serviceAccounts = defineKind<ServiceAccount>({
  ...{},
  ...RESOURCES.serviceaccounts,
  subresources: ['token'],
  columns: [computed<ServiceAccount>('Secrets', (sa) => (Array.isArray(sa.secrets) ? sa.secrets.length : 0), { type: 'integer' }), AGE_COLUMN],
});
