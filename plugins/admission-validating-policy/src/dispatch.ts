// One request against every policy and its bindings, as kube-apiserver's ValidatingAdmissionPolicy plugin
// dispatches it: the policy's matchConstraints, each binding's matchResources, the binding's params (one
// evaluation per param), then each failed validation goes where the binding's validationActions send it —
// Deny into the request's refusal, Warn into a warning, Audit into an audit annotation. Configuration
// errors (a param that cannot be found with parameterNotFoundAction Deny, a selector that cannot be
// evaluated) are settled by the policy's failurePolicy, as expression errors are.
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  errorMessage,
  qualifiedResource,
  type ApiErrorCode,
  type KubeObject,
  type Namespace,
  type ValidatingAdmissionPolicyBinding,
} from '@skiff/api';
import type { AdmissionRequest, AuthzAttributes, AuthzDecision } from '@skiff/kernel';
import { jsonToCel, type ConversionCache } from '@skiff/plugin-apiextensions/cel';
import { AuthorizationChecks, authorizerFor } from './authorizer.js';
import type { CompiledPolicy } from './compile.js';
import { validatePolicy, type PolicyDecision } from './evaluate.js';
import { matchResources, type MatchContext, type MatchResult } from './matching.js';
import { VALIDATION_FAILURE_ANNOTATION } from './names.js';

/** A policy with the bindings that name it. */
export interface PolicyHook {
  compiled: CompiledPolicy;
  bindings: readonly ValidatingAdmissionPolicyBinding[];
}

export interface DispatchContext extends MatchContext {
  /** A namespace, or undefined when there is none. */
  namespace(name: string): Promise<Namespace | undefined>;
  /**
   * The params a binding hands its policy for a request in `namespace`: `[null]` when the policy takes none,
   * `[]` when none were found and the binding allows that. Throws a configuration error.
   */
  params(policy: CompiledPolicy, binding: ValidatingAdmissionPolicyBinding, namespace: string): Promise<(KubeObject | null)[]>;
  /** Asks the cluster's authorizers (for the `authorizer` variable). */
  authorize(attributes: AuthzAttributes): Promise<AuthzDecision>;
}

/** How many times one evaluation is run again for authorization checks that depend on earlier decisions. */
const MAX_AUTHORIZATION_ROUNDS = 8;

/** The longest value an audit annotation of a policy may carry; longer ones are cut. */
const MAX_AUDIT_ANNOTATION_VALUE_LENGTH = 10 * 1024;

interface Denial extends PolicyDecision {
  policy: string;
  binding?: string;
}

/** The Status a denial leaves as: the reason a validation names, with its HTTP code (Invalid, 422, otherwise). */
const CODE_BY_REASON: Record<string, ApiErrorCode> = {
  Forbidden: 'SKIFF_ERR_API_FORBIDDEN',
  Unauthorized: 'SKIFF_ERR_API_UNAUTHORIZED',
  RequestEntityTooLarge: 'SKIFF_ERR_API_REQUEST_ENTITY_TOO_LARGE',
  Invalid: 'SKIFF_ERR_API_INVALID',
};

function refusal(request: AdmissionRequest, denial: Denial): ApiError {
  const message = denial.binding
    ? `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.message}`
    : `ValidatingAdmissionPolicy '${denial.policy}' denied request: ${denial.message}`;
  const resource = qualifiedResource(request.resource.resource, request.resource.group);
  const full = request.name ? `${resource} "${request.name}" is forbidden: ${message}` : `${resource} is forbidden: ${message}`;
  return new ApiError(CODE_BY_REASON[denial.reason ?? 'Invalid'] ?? 'SKIFF_ERR_API_INVALID', full, {
    name: request.name,
    ...(request.resource.group ? { group: request.resource.group } : {}),
    kind: request.resource.resource,
    causes: [{ message }],
  });
}

/** `request` as expressions see it: upstream's AdmissionRequest, the resource and kind as the policy matched them. */
function celRequest(request: AdmissionRequest, matched: Extract<MatchResult, { matches: true }>, uid: string): Record<string, unknown> {
  return {
    uid,
    kind: matched.kind,
    resource: matched.resource,
    subResource: request.subresource,
    requestKind: request.kind,
    requestResource: request.resource,
    requestSubResource: request.subresource,
    name: request.name,
    namespace: request.namespace,
    operation: request.operation,
    userInfo: {
      username: request.user.username,
      uid: request.user.uid ?? '',
      groups: request.user.groups ?? [],
      extra: request.user.extra ?? {},
    },
    dryRun: request.dryRun,
  };
}

/** `namespaceObject`: the namespace's spec, status and the identifying parts of its metadata. */
function celNamespace(namespace: Namespace | undefined): Record<string, unknown> | null {
  if (!namespace) return null;
  const m = namespace.metadata;
  const metadata = Object.fromEntries(
    Object.entries({
      name: m.name,
      generateName: m.generateName,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      generation: m.generation,
      creationTimestamp: m.creationTimestamp,
      deletionTimestamp: m.deletionTimestamp,
      deletionGracePeriodSeconds: m.deletionGracePeriodSeconds,
      labels: m.labels,
      annotations: m.annotations,
      finalizers: m.finalizers,
    }).filter(([, v]) => v !== undefined),
  );
  return { metadata, spec: namespace.spec ?? {}, status: namespace.status ?? {} };
}

/** Params as CEL values, by the (cached, immutable) object they were made from: converted once, not per request. */
const PARAM_VALUES = new WeakMap<KubeObject, unknown>();

/** A param as expressions see it, carrying its apiVersion and kind as the policy's paramKind names them, whatever the cache kept. */
function celParam(param: KubeObject | null, policy: CompiledPolicy): unknown {
  if (!param) return null;
  let value = PARAM_VALUES.get(param);
  if (value === undefined) {
    const kind = policy.policy.spec?.paramKind;
    value = jsonToCel({ ...{}, ...param, apiVersion: param.apiVersion ?? kind?.apiVersion, kind: param.kind ?? kind?.kind });
    PARAM_VALUES.set(param, value);
  }
  return value;
}

function setAnnotation(request: AdmissionRequest, key: string, value: string): void {
  const annotations = request.auditAnnotations;
  if (annotations && annotations[key] === undefined) annotations[key] = value;
}

/**
 * Runs `hooks` against `request`: adds warnings and audit annotations to it, and throws the refusal of the
 * first denial (an ApiError, 422 Invalid unless the validation names another reason).
 */
export async function dispatch(request: AdmissionRequest, hooks: readonly PolicyHook[], context: DispatchContext): Promise<void> {
  const denials: Denial[] = [];
  const uid = randomUUID();
  const checks = new AuthorizationChecks((attributes) => context.authorize(attributes));
  const configError = (compiled: CompiledPolicy, binding: ValidatingAdmissionPolicyBinding | undefined, err: unknown) => {
    if (compiled.failurePolicy === 'Ignore') return;
    const message = `failed to configure ${binding ? 'binding' : 'policy'}: ${errorMessage(err)}`;
    denials.push({ action: 'deny', evaluation: 'error', message, policy: compiled.policy.metadata.name ?? '', binding: binding?.metadata.name });
  };
  const cache: ConversionCache = new WeakMap();
  let namespaceObject: Promise<unknown> | undefined;
  const namespaceName = request.resource.group === '' && request.resource.resource === 'namespaces' ? '' : request.namespace;

  for (const hook of hooks) {
    const { compiled } = hook;
    const policyName = compiled.policy.metadata.name ?? '';
    let matched: MatchResult;
    try {
      matched = await matchResources(compiled.policy.spec?.matchConstraints, request, context);
    } catch (err) {
      configError(compiled, undefined, err);
      continue;
    }
    if (!matched.matches) continue;
    let celRequestValue: unknown;
    const annotations = new Map<string, string[]>();
    for (const binding of hook.bindings) {
      const bindingName = binding.metadata.name ?? '';
      let params: (KubeObject | null)[];
      try {
        if (!(await matchResources(binding.spec?.matchResources, request, context)).matches) continue;
        params = await context.params(compiled, binding, request.namespace);
      } catch (err) {
        configError(compiled, binding, err);
        continue;
      }
      if (params.length === 0) continue;
      namespaceObject ??= (namespaceName ? context.namespace(namespaceName) : Promise.resolve(undefined)).then((ns) => jsonToCel(celNamespace(ns), cache));
      celRequestValue ??= jsonToCel(celRequest(request, matched, uid), cache);
      const input = {
        cache,
        object: request.object ?? null,
        oldObject: request.oldObject ?? null,
        request: celRequestValue,
        namespaceObject: await namespaceObject,
        authorizer: authorizerFor(checks, request.user, {
          group: matched.resource.group,
          resource: matched.resource.resource,
          subresource: request.subresource,
          namespace: request.namespace,
          name: request.name,
        }),
      };
      for (const param of params) {
        const evaluate = () => validatePolicy(compiled, { ...{}, ...input, params: celParam(param, compiled) });
        let result = evaluate();
        for (let round = 1; checks.undecided; round++) {
          if (round >= MAX_AUTHORIZATION_ROUNDS) checks.abandon();
          else await checks.resolve();
          result = evaluate();
        }
        result.decisions.forEach((decision, index) => {
          if (decision.action !== 'deny') return;
          for (const action of binding.spec?.validationActions ?? []) {
            if (action === 'Deny') denials.push({ ...{}, ...decision, policy: policyName, binding: bindingName });
            else if (action === 'Warn')
              request.warnings?.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${decision.message}`);
            else if (action === 'Audit')
              setAnnotation(
                request,
                VALIDATION_FAILURE_ANNOTATION,
                JSON.stringify([
                  {
                    message: decision.message,
                    policy: binding.spec?.policyName,
                    binding: bindingName,
                    expressionIndex: index,
                    validationActions: binding.spec?.validationActions,
                  },
                ]),
              );
          }
        });
        for (const annotation of result.auditAnnotations) {
          if (annotation.action === 'publish') {
            const values = annotations.get(annotation.key) ?? [];
            const value = annotation.value!.slice(0, MAX_AUDIT_ANNOTATION_VALUE_LENGTH);
            if (!values.includes(value)) annotations.set(annotation.key, [...values, value]);
          } else if (annotation.action === 'error') {
            denials.push({ action: 'deny', evaluation: 'error', message: annotation.error, policy: policyName, binding: bindingName });
          }
        }
      }
    }
    for (const [key, values] of annotations) setAnnotation(request, `${policyName}/${key}`, values.join(', '));
  }
  if (denials.length > 0) throw refusal(request, denials[0]!);
}
