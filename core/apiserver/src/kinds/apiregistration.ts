// apiregistration.k8s.io/v1: API services — which server answers for a group/version.
import { defineKind, RESOURCES, type APIService, type ResourceDefinition, type StatusCause } from '@skiff/api';
import { fieldErrors, isDNS1123Subdomain } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from './columns.js';

const DEFAULT_SERVICE_PORT = 443;
const MAX_GROUP_PRIORITY = 20000;
const MAX_VERSION_PRIORITY = 1000;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

function validateAPIService(apiService: APIService): StatusCause[] {
  const spec = apiService.spec ?? {};
  const causes: StatusCause[] = [];
  const expected = `${spec.version ?? ''}.${spec.group ?? ''}`;
  if (apiService.metadata.name !== expected)
    causes.push(fieldErrors.invalid('metadata.name', apiService.metadata.name ?? '', `must be \`spec.version+"."+spec.group\`: "${expected}"`));
  if (!spec.group && spec.version !== 'v1') causes.push(fieldErrors.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (spec.group) causes.push(...isDNS1123Subdomain(spec.group).map((message) => fieldErrors.invalid('spec.group', spec.group, message)));
  const version = spec.version ?? '';
  if (version.length > 63 || !DNS1035_LABEL.test(version))
    causes.push(
      fieldErrors.invalid(
        'spec.version',
        version,
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
      ),
    );
  const groupPriority = spec.groupPriorityMinimum ?? 0;
  if (groupPriority <= 0 || groupPriority > MAX_GROUP_PRIORITY)
    causes.push(fieldErrors.invalid('spec.groupPriorityMinimum', groupPriority, `must be positive and less than ${MAX_GROUP_PRIORITY}`));
  const versionPriority = spec.versionPriority ?? 0;
  if (versionPriority <= 0 || versionPriority > MAX_VERSION_PRIORITY)
    causes.push(fieldErrors.invalid('spec.versionPriority', versionPriority, `must be positive and less than ${MAX_VERSION_PRIORITY}`));
  if (!spec.service) {
    if (spec.caBundle) causes.push(fieldErrors.invalid('spec.caBundle', `${spec.caBundle.length} bytes`, 'local APIServices may not have a caBundle'));
    if (spec.insecureSkipTLSVerify)
      causes.push(fieldErrors.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return causes;
  }
  if (!spec.service.namespace) causes.push(fieldErrors.required('spec.service.namespace'));
  if (!spec.service.name) causes.push(fieldErrors.required('spec.service.name'));
  const port = spec.service.port;
  if (port !== undefined && (port < 1 || port > 65535)) causes.push(fieldErrors.invalid('spec.service.port', port, 'must be between 1 and 65535, inclusive'));
  if (spec.insecureSkipTLSVerify && spec.caBundle)
    causes.push(fieldErrors.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return causes;
}

/** Available as kubectl prints it: the condition's status, with its reason unless True; Unknown without one. */
function availableCell(apiService: APIService): string {
  const condition = apiService.status?.conditions?.find((c) => c.type === 'Available');
  if (!condition) return 'Unknown';
  const status = condition.status ?? '';
  return status !== 'True' && condition.reason ? `${status} (${condition.reason})` : status;
}

export const apiServices = defineKind<APIService>({
  ...{},
  ...RESOURCES.apiservices,
  // The core group's service is named `v1.`, so names are path segments; validate insists on <version>.<group>.
  names: 'path-segment',
  subresources: ['status'],
  keptOnStatusUpdate: ['labels', 'annotations', 'finalizers', 'ownerReferences'],
  columns: [
    computed('Service', (a) => (a.spec?.service ? `${a.spec.service.namespace ?? ''}/${a.spec.service.name ?? ''}` : 'Local')),
    computed('Available', availableCell),
    AGE_COLUMN,
  ],
  strategy: {
    defaults(object) {
      const service = object.spec?.service;
      if (service) service.port ??= DEFAULT_SERVICE_PORT;
    },
    validate: validateAPIService,
  },
});

export const APIREGISTRATION_KINDS: ResourceDefinition[] = [apiServices];
