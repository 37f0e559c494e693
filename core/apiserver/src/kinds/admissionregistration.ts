// admissionregistration.k8s.io/v1: webhook configurations, admission policies and their bindings.
// CEL expressions are checked for presence only; they are not compiled.
import {
  defineKind,
  fieldErrors,
  isDNS1123Subdomain,
  validateLabelSelector,
  type KubeObject,
  type LabelSelector,
  type ResourceDefinition,
  type StatusCause,
} from '@skiff/api';
import { AGE_COLUMN, computed, selectorCell } from './columns.js';

const GROUP = 'admissionregistration.k8s.io';
const CATEGORIES = ['api-extensions'];
const DEFAULT_TIMEOUT_SECONDS = 10;
const DEFAULT_SERVICE_PORT = 443;
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

interface Webhook {
  name?: string;
  clientConfig?: { url?: string; service?: { namespace?: string; name?: string; path?: string; port?: number }; caBundle?: string };
  rules?: Rule[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: string;
  matchConditions?: { name?: string; expression?: string }[];
}

type WebhookConfiguration = KubeObject & { webhooks?: Webhook[] };

interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: Rule[];
  excludeResourceRules?: Rule[];
  matchPolicy?: string;
}

type Policy = KubeObject & {
  spec?: {
    paramKind?: { apiVersion?: string; kind?: string };
    matchConstraints?: MatchResources;
    validations?: { expression?: string }[];
    auditAnnotations?: { key?: string; valueExpression?: string }[];
    mutations?: { patchType?: string; applyConfiguration?: { expression?: string }; jsonPatch?: { expression?: string } }[];
    failurePolicy?: string;
    reinvocationPolicy?: string;
    matchConditions?: { name?: string; expression?: string }[];
    variables?: { name?: string; expression?: string }[];
  };
};

type PolicyBinding = KubeObject & {
  spec?: {
    policyName?: string;
    paramRef?: { name?: string; namespace?: string; selector?: LabelSelector; parameterNotFoundAction?: string };
    matchResources?: MatchResources;
    validationActions?: string[];
  };
};

const isSet = (values: unknown[] | undefined): boolean => (values?.length ?? 0) > 0;

function defaultRules(rules: Rule[] | undefined): void {
  for (const rule of rules ?? []) rule.scope ??= '*';
}

function defaultMatchResources(match: MatchResources): void {
  match.matchPolicy ??= 'Equivalent';
  match.namespaceSelector ??= {};
  match.objectSelector ??= {};
  defaultRules(match.resourceRules);
  defaultRules(match.excludeResourceRules);
}

function defaultWebhooks(object: KubeObject, mutating: boolean): void {
  for (const webhook of (object as WebhookConfiguration).webhooks ?? []) {
    webhook.failurePolicy ??= 'Fail';
    webhook.matchPolicy ??= 'Equivalent';
    webhook.namespaceSelector ??= {};
    webhook.objectSelector ??= {};
    webhook.timeoutSeconds ??= DEFAULT_TIMEOUT_SECONDS;
    if (mutating) webhook.reinvocationPolicy ??= 'Never';
    const service = webhook.clientConfig?.service;
    if (service) service.port ??= DEFAULT_SERVICE_PORT;
    defaultRules(webhook.rules);
  }
}

function validateRules(rules: Rule[] | undefined, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  (rules ?? []).forEach((rule, i) => {
    const at = `${path}[${i}]`;
    if (!isSet(rule.operations)) causes.push(fieldErrors.required(`${at}.operations`));
    if (!isSet(rule.apiGroups)) causes.push(fieldErrors.required(`${at}.apiGroups`));
    if (!isSet(rule.apiVersions)) causes.push(fieldErrors.required(`${at}.apiVersions`));
    if (!isSet(rule.resources)) causes.push(fieldErrors.required(`${at}.resources`));
  });
  return causes;
}

function validateSelector(selector: LabelSelector | undefined, path: string): StatusCause[] {
  return selector ? validateLabelSelector(selector, path) : [];
}

function validateNamedExpressions(items: { name?: string; expression?: string }[] | undefined, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  (items ?? []).forEach((item, i) => {
    const at = `${path}[${i}]`;
    if (!item.name) causes.push(fieldErrors.required(`${at}.name`));
    else if (names.has(item.name)) causes.push(fieldErrors.duplicate(`${at}.name`, item.name));
    names.add(item.name ?? '');
    if (!item.expression) causes.push(fieldErrors.required(`${at}.expression`));
  });
  return causes;
}

function validateClientConfig(config: Webhook['clientConfig'], path: string): StatusCause[] {
  const url = config?.url;
  const service = config?.service;
  if ((url === undefined) === (service === undefined)) return [fieldErrors.required(path, 'exactly one of url or service is required')];
  const causes: StatusCause[] = [];
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      causes.push(fieldErrors.invalid(`${path}.url`, url, 'host must be specified'));
    }
    if (parsed) {
      if (parsed.protocol !== 'https:') causes.push(fieldErrors.invalid(`${path}.url`, url, "'https' is the only allowed URL scheme"));
      if (!parsed.host) causes.push(fieldErrors.invalid(`${path}.url`, url, 'host must be specified'));
      if (parsed.username || parsed.password) causes.push(fieldErrors.invalid(`${path}.url`, url, 'user information is not permitted in the URL'));
      if (parsed.hash) causes.push(fieldErrors.invalid(`${path}.url`, url, 'fragments are not permitted in the URL'));
      if (parsed.search) causes.push(fieldErrors.invalid(`${path}.url`, url, 'query parameters are not permitted in the URL'));
    }
  }
  if (service) {
    if (!service.namespace) causes.push(fieldErrors.required(`${path}.service.namespace`, 'service namespace is required'));
    if (!service.name) causes.push(fieldErrors.required(`${path}.service.name`, 'service name is required'));
    if (service.path !== undefined && !service.path.startsWith('/'))
      causes.push(fieldErrors.invalid(`${path}.service.path`, service.path, "must start with a '/'"));
    if (service.port !== undefined && (service.port < 1 || service.port > 65535))
      causes.push(fieldErrors.invalid(`${path}.service.port`, service.port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  return causes;
}

function validateWebhooks(object: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  ((object as WebhookConfiguration).webhooks ?? []).forEach((webhook, i) => {
    const path = `webhooks[${i}]`;
    const name = webhook.name ?? '';
    if (!name) causes.push(fieldErrors.required(`${path}.name`));
    else {
      causes.push(...isDNS1123Subdomain(name).map((message) => fieldErrors.invalid(`${path}.name`, name, message)));
      if (name.split('.').length < 3)
        causes.push(fieldErrors.invalid(`${path}.name`, name, 'should be a domain with at least three segments separated by dots'));
      if (names.has(name)) causes.push(fieldErrors.duplicate(`${path}.name`, name));
    }
    names.add(name);
    causes.push(...validateRules(webhook.rules, `${path}.rules`));
    if (!webhook.sideEffects) causes.push(fieldErrors.required(`${path}.sideEffects`, 'must specify one of None, NoneOnDryRun'));
    else if (webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun')
      causes.push(fieldErrors.notSupported(`${path}.sideEffects`, webhook.sideEffects, ['None', 'NoneOnDryRun']));
    const versions = webhook.admissionReviewVersions ?? [];
    if (versions.length === 0) causes.push(fieldErrors.required(`${path}.admissionReviewVersions`, `must specify one of ${REVIEW_VERSIONS.join(', ')}`));
    else if (!versions.some((version) => REVIEW_VERSIONS.includes(version)))
      causes.push(fieldErrors.invalid(`${path}.admissionReviewVersions`, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
    if (webhook.timeoutSeconds !== undefined && (webhook.timeoutSeconds < 1 || webhook.timeoutSeconds > 30))
      causes.push(fieldErrors.invalid(`${path}.timeoutSeconds`, webhook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
    causes.push(...validateClientConfig(webhook.clientConfig, `${path}.clientConfig`));
    causes.push(...validateSelector(webhook.namespaceSelector, `${path}.namespaceSelector`));
    causes.push(...validateSelector(webhook.objectSelector, `${path}.objectSelector`));
    causes.push(...validateNamedExpressions(webhook.matchConditions, `${path}.matchConditions`));
  });
  return causes;
}

function validateMatchResources(match: MatchResources | undefined, path: string, required: boolean): StatusCause[] {
  if (!match) return required ? [fieldErrors.required(path)] : [];
  const causes: StatusCause[] = [];
  if (required && !isSet(match.resourceRules)) causes.push(fieldErrors.required(`${path}.resourceRules`));
  causes.push(...validateRules(match.resourceRules, `${path}.resourceRules`));
  causes.push(...validateRules(match.excludeResourceRules, `${path}.excludeResourceRules`));
  causes.push(...validateSelector(match.namespaceSelector, `${path}.namespaceSelector`));
  causes.push(...validateSelector(match.objectSelector, `${path}.objectSelector`));
  return causes;
}

function validatePolicy(object: KubeObject, mutating: boolean): StatusCause[] {
  const spec = (object as Policy).spec ?? {};
  const causes: StatusCause[] = [];
  if (spec.paramKind) {
    if (!spec.paramKind.apiVersion) causes.push(fieldErrors.required('spec.paramKind.apiVersion'));
    if (!spec.paramKind.kind) causes.push(fieldErrors.required('spec.paramKind.kind'));
  }
  causes.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints', true));
  causes.push(...validateNamedExpressions(spec.matchConditions, 'spec.matchConditions'));
  causes.push(...validateNamedExpressions(spec.variables, 'spec.variables'));
  if (mutating) {
    if (!isSet(spec.mutations)) causes.push(fieldErrors.required('spec.mutations', 'mutations must contain at least one item'));
    (spec.mutations ?? []).forEach((mutation, i) => {
      const path = `spec.mutations[${i}]`;
      if (mutation.patchType === 'ApplyConfiguration' && !mutation.applyConfiguration?.expression)
        causes.push(fieldErrors.required(`${path}.applyConfiguration`, 'must be specified when patchType is ApplyConfiguration'));
      if (mutation.patchType === 'JSONPatch' && !mutation.jsonPatch?.expression)
        causes.push(fieldErrors.required(`${path}.jsonPatch`, 'must be specified when patchType is JSONPatch'));
      if (!mutation.patchType) causes.push(fieldErrors.required(`${path}.patchType`));
    });
  } else {
    if (!isSet(spec.validations) && !isSet(spec.auditAnnotations))
      causes.push(fieldErrors.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
    (spec.validations ?? []).forEach((validation, i) => {
      if (!validation.expression) causes.push(fieldErrors.required(`spec.validations[${i}].expression`));
    });
    (spec.auditAnnotations ?? []).forEach((annotation, i) => {
      if (!annotation.key) causes.push(fieldErrors.required(`spec.auditAnnotations[${i}].key`));
      if (!annotation.valueExpression) causes.push(fieldErrors.required(`spec.auditAnnotations[${i}].valueExpression`));
    });
  }
  return causes;
}

function defaultPolicy(object: KubeObject, mutating: boolean): void {
  const spec = ((object as Policy).spec ??= {});
  spec.failurePolicy ??= 'Fail';
  if (mutating) spec.reinvocationPolicy ??= 'Never';
  if (spec.matchConstraints) defaultMatchResources(spec.matchConstraints);
}

function validateBinding(object: KubeObject, validating: boolean): StatusCause[] {
  const spec = (object as PolicyBinding).spec ?? {};
  const causes: StatusCause[] = [];
  if (!spec.policyName) causes.push(fieldErrors.required('spec.policyName'));
  const ref = spec.paramRef;
  if (ref) {
    if (ref.name && ref.selector) causes.push(fieldErrors.forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
    if (!ref.name && !ref.selector) causes.push(fieldErrors.required('spec.paramRef', 'one of name or selector must be specified'));
    causes.push(...validateSelector(ref.selector, 'spec.paramRef.selector'));
    if (!ref.parameterNotFoundAction) causes.push(fieldErrors.required('spec.paramRef.parameterNotFoundAction'));
    else if (ref.parameterNotFoundAction !== 'Allow' && ref.parameterNotFoundAction !== 'Deny')
      causes.push(fieldErrors.notSupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, ['Allow', 'Deny']));
  }
  causes.push(...validateMatchResources(spec.matchResources, 'spec.matchResources', false));
  if (validating) {
    const actions = spec.validationActions ?? [];
    if (actions.length === 0) causes.push(fieldErrors.required('spec.validationActions'));
    const seen = new Set<string>();
    actions.forEach((action, i) => {
      if (seen.has(action)) causes.push(fieldErrors.duplicate(`spec.validationActions[${i}]`, action));
      seen.add(action);
    });
    if (seen.has('Deny') && seen.has('Warn'))
      causes.push(
        fieldErrors.invalid(
          'spec.validationActions',
          actions,
          'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
        ),
      );
  }
  return causes;
}

function defaultBinding(object: KubeObject): void {
  const match = (object as PolicyBinding).spec?.matchResources;
  if (match) defaultMatchResources(match);
}

/** ParamRef as kubectl prints it: namespace/name (`*` for any namespace), the selector, or `<unset>`. */
function paramRefCell(binding: PolicyBinding): string {
  const ref = binding.spec?.paramRef;
  if (!ref) return '<unset>';
  if (ref.name) return `${ref.namespace || '*'}/${ref.name}`;
  return ref.selector ? selectorCell(ref.selector) : '<unset>';
}

const paramKindCell = (policy: Policy): string =>
  policy.spec?.paramKind ? `${policy.spec.paramKind.apiVersion ?? ''}/${policy.spec.paramKind.kind ?? ''}` : '<unset>';

const WEBHOOK_COLUMNS = [computed<WebhookConfiguration>('Webhooks', (c) => c.webhooks?.length ?? 0, { type: 'integer' }), AGE_COLUMN];
const BINDING_COLUMNS = [computed<PolicyBinding>('PolicyName', (b) => b.spec?.policyName ?? ''), computed<PolicyBinding>('ParamRef', paramRefCell), AGE_COLUMN];

export const mutatingWebhookConfigurations = defineKind({
  group: GROUP,
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  resource: 'mutatingwebhookconfigurations',
  namespaced: false,
  categories: CATEGORIES,
  columns: WEBHOOK_COLUMNS,
  strategy: { defaults: (object) => defaultWebhooks(object, true), validate: validateWebhooks },
});

export const validatingWebhookConfigurations = defineKind({
  group: GROUP,
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  resource: 'validatingwebhookconfigurations',
  namespaced: false,
  categories: CATEGORIES,
  columns: WEBHOOK_COLUMNS,
  strategy: { defaults: (object) => defaultWebhooks(object, false), validate: validateWebhooks },
});

export const validatingAdmissionPolicies = defineKind({
  group: GROUP,
  version: 'v1',
  kind: 'ValidatingAdmissionPolicy',
  resource: 'validatingadmissionpolicies',
  namespaced: false,
  categories: CATEGORIES,
  subresources: ['status'],
  columns: [
    computed<Policy>('Validations', (p) => p.spec?.validations?.length ?? 0, { type: 'integer' }),
    computed<Policy>('ParamKind', paramKindCell),
    AGE_COLUMN,
  ],
  strategy: { defaults: (object) => defaultPolicy(object, false), validate: (object) => validatePolicy(object, false) },
});

export const mutatingAdmissionPolicies = defineKind({
  group: GROUP,
  version: 'v1',
  kind: 'MutatingAdmissionPolicy',
  resource: 'mutatingadmissionpolicies',
  namespaced: false,
  categories: CATEGORIES,
  columns: [
    computed<Policy>('Mutations', (p) => p.spec?.mutations?.length ?? 0, { type: 'integer' }),
    computed<Policy>('ParamKind', paramKindCell),
    AGE_COLUMN,
  ],
  strategy: { defaults: (object) => defaultPolicy(object, true), validate: (object) => validatePolicy(object, true) },
});

export const validatingAdmissionPolicyBindings = defineKind({
  group: GROUP,
  version: 'v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  resource: 'validatingadmissionpolicybindings',
  namespaced: false,
  categories: CATEGORIES,
  columns: BINDING_COLUMNS,
  strategy: { defaults: defaultBinding, validate: (object) => validateBinding(object, true) },
});

export const mutatingAdmissionPolicyBindings = defineKind({
  group: GROUP,
  version: 'v1',
  kind: 'MutatingAdmissionPolicyBinding',
  resource: 'mutatingadmissionpolicybindings',
  namespaced: false,
  categories: CATEGORIES,
  columns: BINDING_COLUMNS,
  strategy: { defaults: defaultBinding, validate: (object) => validateBinding(object, false) },
});

export const ADMISSIONREGISTRATION_KINDS: ResourceDefinition[] = [
  mutatingAdmissionPolicies,
  mutatingAdmissionPolicyBindings,
  mutatingWebhookConfigurations,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
];
