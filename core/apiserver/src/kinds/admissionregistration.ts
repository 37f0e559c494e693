// admissionregistration.k8s.io/v1: webhook configurations, admission policies and their bindings.
// CEL expressions are checked for presence only; they are not compiled.
import {
  defineKind,
  RESOURCES,
  type LabelSelector,
  type MatchResources,
  type MutatingAdmissionPolicy,
  type MutatingAdmissionPolicyBinding,
  type MutatingAdmissionPolicySpec,
  type MutatingWebhook,
  type MutatingWebhookConfiguration,
  type ResourceDefinition,
  type RuleWithOperations,
  type StatusCause,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
  type ValidatingAdmissionPolicySpec,
  type ValidatingWebhook,
  type ValidatingWebhookConfiguration,
  STATUS_ONLY_METADATA,
} from '@skiff/api';
import { fieldErrors, isDNS1123Subdomain, validateLabelSelector } from '@skiff/api/validation';
import { AGE_COLUMN, computed, selectorCell } from './columns.js';

const DEFAULT_TIMEOUT_SECONDS = 10;
const DEFAULT_SERVICE_PORT = 443;
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

// Each validating kind has a mutating sibling of the same shape plus what mutating adds; the rules they
// share are written once, over the union of the two.
type WebhookConfiguration = ValidatingWebhookConfiguration | MutatingWebhookConfiguration;
type Webhook = ValidatingWebhook | MutatingWebhook;
type AdmissionPolicy = ValidatingAdmissionPolicy | MutatingAdmissionPolicy;
type PolicyBinding = ValidatingAdmissionPolicyBinding | MutatingAdmissionPolicyBinding;
type PolicyBindingSpec = NonNullable<PolicyBinding['spec']>;

const isSet = (values: unknown[] | undefined): boolean => (values?.length ?? 0) > 0;

function defaultRules(rules: RuleWithOperations[] | undefined): void {
  for (const rule of rules ?? []) rule.scope ??= '*';
}

function defaultMatchResources(match: MatchResources): void {
  match.matchPolicy ??= 'Equivalent';
  match.namespaceSelector ??= {};
  match.objectSelector ??= {};
  defaultRules(match.resourceRules);
  defaultRules(match.excludeResourceRules);
}

/** Defaults both webhook kinds share; `defaultOwn` sets a kind's own fields, in the order upstream writes them. */
function defaultWebhook(webhook: Webhook, defaultOwn?: () => void): void {
  webhook.failurePolicy ??= 'Fail';
  webhook.matchPolicy ??= 'Equivalent';
  webhook.namespaceSelector ??= {};
  webhook.objectSelector ??= {};
  webhook.timeoutSeconds ??= DEFAULT_TIMEOUT_SECONDS;
  defaultOwn?.();
  const service = webhook.clientConfig?.service;
  if (service) service.port ??= DEFAULT_SERVICE_PORT;
  defaultRules(webhook.rules);
}

function validateRules(rules: RuleWithOperations[] | undefined, path: string): StatusCause[] {
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
    if (service.path !== undefined) causes.push(...servicePathCauses(service.path, `${path}.service.path`));
    if (service.port !== undefined && (service.port < 1 || service.port > 65535))
      causes.push(fieldErrors.invalid(`${path}.service.port`, service.port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  return causes;
}

/** A webhook Service's path: empty or `/` (the root), else `/`-separated DNS-1123 subdomains, one trailing `/` allowed. */
function servicePathCauses(urlPath: string, field: string): StatusCause[] {
  if (urlPath === '' || urlPath === '/') return [];
  if (urlPath === '//') return [fieldErrors.invalid(field, urlPath, 'segment[0] may not be empty')];
  const causes: StatusCause[] = [];
  if (!urlPath.startsWith('/')) causes.push(fieldErrors.invalid(field, urlPath, "must start with a '/'"));
  const steps = urlPath.slice(1).replace(/\/$/, '').split('/');
  steps.forEach((step, i) => {
    if (!step) causes.push(fieldErrors.invalid(field, urlPath, `segment[${i}] may not be empty`));
    else causes.push(...isDNS1123Subdomain(step).map((message) => fieldErrors.invalid(field, urlPath, `segment[${i}]: ${message}`)));
  });
  return causes;
}

function validateWebhooks(configuration: WebhookConfiguration): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  const webhooks: Webhook[] = configuration.webhooks ?? [];
  webhooks.forEach((webhook, i) => {
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

/** What both policy kinds check: the parameter kind, what they match, their conditions and variables. */
function validatePolicySpec(spec: ValidatingAdmissionPolicySpec | MutatingAdmissionPolicySpec): StatusCause[] {
  const causes: StatusCause[] = [];
  if (spec.paramKind) {
    if (!spec.paramKind.apiVersion) causes.push(fieldErrors.required('spec.paramKind.apiVersion'));
    if (!spec.paramKind.kind) causes.push(fieldErrors.required('spec.paramKind.kind'));
  }
  causes.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints', true));
  causes.push(...validateNamedExpressions(spec.matchConditions, 'spec.matchConditions'));
  causes.push(...validateNamedExpressions(spec.variables, 'spec.variables'));
  return causes;
}

function validateMutations(spec: MutatingAdmissionPolicySpec): StatusCause[] {
  const causes: StatusCause[] = [];
  if (!isSet(spec.mutations)) causes.push(fieldErrors.required('spec.mutations', 'mutations must contain at least one item'));
  (spec.mutations ?? []).forEach((mutation, i) => {
    const path = `spec.mutations[${i}]`;
    if (mutation.patchType === 'ApplyConfiguration' && !mutation.applyConfiguration?.expression)
      causes.push(fieldErrors.required(`${path}.applyConfiguration`, 'must be specified when patchType is ApplyConfiguration'));
    if (mutation.patchType === 'JSONPatch' && !mutation.jsonPatch?.expression)
      causes.push(fieldErrors.required(`${path}.jsonPatch`, 'must be specified when patchType is JSONPatch'));
    if (!mutation.patchType) causes.push(fieldErrors.required(`${path}.patchType`));
  });
  return causes;
}

function validateValidations(spec: ValidatingAdmissionPolicySpec): StatusCause[] {
  const causes: StatusCause[] = [];
  if (!isSet(spec.validations) && !isSet(spec.auditAnnotations))
    causes.push(fieldErrors.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  (spec.validations ?? []).forEach((validation, i) => {
    if (!validation.expression) causes.push(fieldErrors.required(`spec.validations[${i}].expression`));
  });
  (spec.auditAnnotations ?? []).forEach((annotation, i) => {
    if (!annotation.key) causes.push(fieldErrors.required(`spec.auditAnnotations[${i}].key`));
    if (!annotation.valueExpression) causes.push(fieldErrors.required(`spec.auditAnnotations[${i}].valueExpression`));
  });
  return causes;
}

/** Defaults both policy kinds share; `defaultOwn` sets a kind's own fields, in the order upstream writes them. */
function defaultPolicySpec(spec: ValidatingAdmissionPolicySpec | MutatingAdmissionPolicySpec, defaultOwn?: () => void): void {
  spec.failurePolicy ??= 'Fail';
  defaultOwn?.();
  if (spec.matchConstraints) defaultMatchResources(spec.matchConstraints);
}

/** What both binding kinds check: the policy, its parameters and what the binding matches. */
function validateBindingSpec(spec: Partial<PolicyBindingSpec>): StatusCause[] {
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
  return causes;
}

function validateValidationActions(actions: string[] = []): StatusCause[] {
  const causes: StatusCause[] = [];
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
  return causes;
}

function defaultBinding(binding: PolicyBinding): void {
  const match = binding.spec?.matchResources;
  if (match) defaultMatchResources(match);
}

/** ParamRef as kubectl prints it: namespace/name (`*` for any namespace), the selector, or `<unset>`. */
function paramRefCell(binding: PolicyBinding): string {
  const ref = binding.spec?.paramRef;
  if (!ref) return '<unset>';
  if (ref.name) return `${ref.namespace || '*'}/${ref.name}`;
  return ref.selector ? selectorCell(ref.selector) : '<unset>';
}

const paramKindCell = (policy: AdmissionPolicy): string =>
  policy.spec?.paramKind ? `${policy.spec.paramKind.apiVersion ?? ''}/${policy.spec.paramKind.kind ?? ''}` : '<unset>';

const WEBHOOK_COLUMNS = [computed<WebhookConfiguration>('Webhooks', (c) => c.webhooks?.length ?? 0, { type: 'integer' }), AGE_COLUMN];
const PARAM_KIND_COLUMN = computed<AdmissionPolicy>('ParamKind', paramKindCell);
const BINDING_COLUMNS = [computed<PolicyBinding>('PolicyName', (b) => b.spec?.policyName ?? ''), computed<PolicyBinding>('ParamRef', paramRefCell), AGE_COLUMN];

export const mutatingWebhookConfigurations = defineKind<MutatingWebhookConfiguration>({
  ...{},
  ...RESOURCES.mutatingwebhookconfigurations,
  columns: WEBHOOK_COLUMNS,
  strategy: {
    defaults(configuration) {
      for (const webhook of configuration.webhooks ?? []) defaultWebhook(webhook, () => (webhook.reinvocationPolicy ??= 'Never'));
    },
    validate: validateWebhooks,
  },
});

export const validatingWebhookConfigurations = defineKind<ValidatingWebhookConfiguration>({
  ...{},
  ...RESOURCES.validatingwebhookconfigurations,
  columns: WEBHOOK_COLUMNS,
  strategy: {
    defaults(configuration) {
      for (const webhook of configuration.webhooks ?? []) defaultWebhook(webhook);
    },
    validate: validateWebhooks,
  },
});

export const validatingAdmissionPolicies = defineKind<ValidatingAdmissionPolicy>({
  ...{},
  ...RESOURCES.validatingadmissionpolicies,
  subresources: ['status'],
  keptOnStatusUpdate: STATUS_ONLY_METADATA,
  columns: [computed('Validations', (p) => p.spec?.validations?.length ?? 0, { type: 'integer' }), PARAM_KIND_COLUMN, AGE_COLUMN],
  strategy: {
    defaults: (policy) => defaultPolicySpec((policy.spec ??= {})),
    validate(policy) {
      const spec = policy.spec ?? {};
      return [...validatePolicySpec(spec), ...validateValidations(spec)];
    },
  },
});

export const mutatingAdmissionPolicies = defineKind<MutatingAdmissionPolicy>({
  ...{},
  ...RESOURCES.mutatingadmissionpolicies,
  columns: [computed('Mutations', (p) => p.spec?.mutations?.length ?? 0, { type: 'integer' }), PARAM_KIND_COLUMN, AGE_COLUMN],
  strategy: {
    defaults(policy) {
      const spec = (policy.spec ??= {});
      defaultPolicySpec(spec, () => (spec.reinvocationPolicy ??= 'Never'));
    },
    validate(policy) {
      const spec = policy.spec ?? {};
      return [...validatePolicySpec(spec), ...validateMutations(spec)];
    },
  },
});

export const validatingAdmissionPolicyBindings = defineKind<ValidatingAdmissionPolicyBinding>({
  ...{},
  ...RESOURCES.validatingadmissionpolicybindings,
  columns: BINDING_COLUMNS,
  strategy: {
    defaults: defaultBinding,
    validate(binding) {
      const spec: Partial<ValidatingAdmissionPolicyBinding['spec']> = binding.spec ?? {};
      return [...validateBindingSpec(spec), ...validateValidationActions(spec.validationActions)];
    },
  },
});

export const mutatingAdmissionPolicyBindings = defineKind<MutatingAdmissionPolicyBinding>({
  ...{},
  ...RESOURCES.mutatingadmissionpolicybindings,
  columns: BINDING_COLUMNS,
  strategy: { defaults: defaultBinding, validate: (binding) => validateBindingSpec(binding.spec ?? {}) },
});

export const ADMISSIONREGISTRATION_KINDS: ResourceDefinition[] = [
  mutatingAdmissionPolicies,
  mutatingAdmissionPolicyBindings,
  mutatingWebhookConfigurations,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
];
