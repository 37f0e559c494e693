import { ApiError, type ConfigMap, type KubeObject, type Namespace, type ValidatingAdmissionPolicy, type ValidatingAdmissionPolicyBinding } from '@skiff/api';
import type { AdmissionRequest, AuthzAttributes, AuthzDecision } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import { compilePolicy, policyCompileCauses } from './compile.js';
import { dispatch, type DispatchContext, type PolicyHook } from './dispatch.js';
import { VALIDATION_FAILURE_ANNOTATION } from './names.js';

const DEPLOYMENTS = { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] };

function policy(spec: ValidatingAdmissionPolicy['spec'], name = 'max-replicas'): ValidatingAdmissionPolicy {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, resourceVersion: '1' },
    spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [DEPLOYMENTS], matchPolicy: 'Equivalent' }, ...spec },
  };
}

function binding(spec: Partial<ValidatingAdmissionPolicyBinding['spec']> = {}, name = 'max-replicas-binding'): ValidatingAdmissionPolicyBinding {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: 'max-replicas', validationActions: ['Deny'], ...spec },
  };
}

const limits = (name: string, maxReplicas: string, labels: Record<string, string> = {}): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'team-a', labels },
  data: { maxReplicas },
});

const NAMESPACES: Record<string, Namespace> = {
  'team-a': { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { env: 'prod' } } },
  'team-b': { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b', labels: { env: 'dev' } } },
};

/** Who may do what, for the `authorizer` variable: `alice` may create deployments in team-a, `system:serviceaccount:team-a:deployer` may delete them. */
async function authorize(attributes: AuthzAttributes): Promise<AuthzDecision> {
  const { user, verb, resource, namespace, path } = attributes;
  if (path === '/metrics') return { decision: 'allow', reason: 'metrics are public' };
  if (user.username === 'alice' && verb === 'create' && resource === 'deployments' && namespace === 'team-a')
    return { decision: 'allow', reason: 'alice edits team-a' };
  if (user.username === 'system:serviceaccount:team-a:deployer' && verb === 'delete' && user.groups.includes('system:serviceaccounts:team-a'))
    return { decision: 'allow', reason: 'deployer deletes' };
  if (verb === 'explode') throw new Error('authorizer unavailable');
  return undefined;
}

/** A context whose params are ConfigMaps found by name or selector in `configMaps`, as the plugin's ParamSource finds them. */
function contextWith(configMaps: ConfigMap[] = []): DispatchContext {
  return {
    authorize,
    async namespace(name) {
      return NAMESPACES[name];
    },
    async namespaceLabels(name) {
      return NAMESPACES[name]?.metadata.labels;
    },
    equivalents: () => [],
    async params(compiled, b, namespace) {
      const ref = b.spec.paramRef;
      if (!compiled.policy.spec?.paramKind || !ref) return [null];
      const ns = ref.namespace || namespace;
      const found = configMaps.filter(
        (c) =>
          c.metadata.namespace === ns &&
          (ref.name ? c.metadata.name === ref.name : Object.entries(ref.selector?.matchLabels ?? {}).every(([k, v]) => c.metadata.labels?.[k] === v)),
      );
      if (found.length === 0 && ref.parameterNotFoundAction === 'Deny')
        throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
      return found;
    },
  };
}

function deployment(replicas: number, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'team-a', labels }, spec: { replicas } } as KubeObject;
}

function request(object: KubeObject | undefined, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    operation: 'CREATE',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    subresource: '',
    namespace: 'team-a',
    name: 'web',
    object,
    user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
    dryRun: false,
    get: async () => undefined,
    warnings: [],
    auditAnnotations: {},
    ...overrides,
  };
}

const PARAMETERISED = policy({
  paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
  validations: [{ expression: 'object.spec.replicas <= int(params.data.maxReplicas)' }],
});

const hooksOf = (p: ValidatingAdmissionPolicy, ...bindings: ValidatingAdmissionPolicyBinding[]): PolicyHook[] => [{ compiled: compilePolicy(p), bindings }];

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

const byName = binding({ paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } });

describe('Deny', () => {
  it('refuses what a validation fails, 422 with upstream words, and admits what passes', async () => {
    const hooks = hooksOf(PARAMETERISED, byName);
    const context = contextWith([limits('limits', '3')]);
    const err = await refusal(dispatch(request(deployment(5)), hooks, context));
    expect(err.status).toBe(422);
    expect(err.reason).toBe('Invalid');
    const message =
      "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= int(params.data.maxReplicas)";
    expect(err.message).toBe(`deployments.apps "web" is forbidden: ${message}`);
    expect(err.details).toEqual({ name: 'web', group: 'apps', kind: 'deployments', causes: [{ message }] });
    await expect(dispatch(request(deployment(3)), hooks, context)).resolves.toBeUndefined();
  });

  it('words the refusal with message, messageExpression (falling back when it fails) and the reason', async () => {
    const p = policy({
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [
        {
          expression: 'object.spec.replicas <= int(params.data.maxReplicas)',
          message: 'too many replicas',
          messageExpression: "'replicas ' + string(object.spec.replicas) + ' is more than ' + params.data.maxReplicas",
          reason: 'Forbidden',
        },
      ],
    });
    const context = contextWith([limits('limits', '3')]);
    const err = await refusal(dispatch(request(deployment(4)), hooksOf(p, byName), context));
    expect(err.status).toBe(403);
    expect(err.message).toContain('denied request: replicas 4 is more than 3');
    const broken = policy({ validations: [{ expression: 'false', message: 'plain message', messageExpression: 'object.nothing' }] });
    expect((await refusal(dispatch(request(deployment(1)), hooksOf(broken, binding()), context))).message).toContain('denied request: plain message');
  });

  it('refuses with the first denial when several policies and validations fail', async () => {
    const p = policy({ validations: [{ expression: 'true' }, { expression: 'false', message: 'first' }, { expression: 'false', message: 'second' }] });
    const err = await refusal(dispatch(request(deployment(1)), hooksOf(p, binding()), contextWith()));
    expect(err.message).toContain('denied request: first');
  });
});

describe('Warn and Audit', () => {
  it('Warn adds a warning and admits', async () => {
    const req = request(deployment(5));
    await dispatch(req, hooksOf(PARAMETERISED, binding({ ...byName.spec, validationActions: ['Warn'] })), contextWith([limits('limits', '3')]));
    expect(req.warnings).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding': failed expression: object.spec.replicas <= int(params.data.maxReplicas)",
    ]);
  });

  it('Audit records the failure as an audit annotation', async () => {
    const req = request(deployment(5));
    await dispatch(req, hooksOf(PARAMETERISED, binding({ ...byName.spec, validationActions: ['Audit'] })), contextWith([limits('limits', '3')]));
    expect(JSON.parse(req.auditAnnotations![VALIDATION_FAILURE_ANNOTATION]!)).toEqual([
      {
        message: 'failed expression: object.spec.replicas <= int(params.data.maxReplicas)',
        policy: 'max-replicas',
        binding: 'max-replicas-binding',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
  });

  it('auditAnnotations publish their values under <policy>/<key>; null and empty values are left out', async () => {
    const p = policy({
      validations: [{ expression: 'true' }],
      auditAnnotations: [
        { key: 'high-replicas', valueExpression: "object.spec.replicas > 2 ? 'replicas: ' + string(object.spec.replicas) : null" },
        { key: 'empty', valueExpression: "''" },
      ],
    });
    const req = request(deployment(5));
    await dispatch(req, hooksOf(p, binding()), contextWith());
    expect(req.auditAnnotations).toEqual({ 'max-replicas/high-replicas': 'replicas: 5' });
    const low = request(deployment(1));
    await dispatch(low, hooksOf(p, binding()), contextWith());
    expect(low.auditAnnotations).toEqual({});
  });
});

describe('params', () => {
  it('evaluates once per param a selector finds', async () => {
    const bySelector = binding({ paramRef: { selector: { matchLabels: { tier: 'limits' } }, parameterNotFoundAction: 'Allow' } });
    const context = contextWith([limits('loose', '10', { tier: 'limits' }), limits('strict', '2', { tier: 'limits' })]);
    const req = request(deployment(5));
    await dispatch(req, hooksOf(PARAMETERISED, { ...bySelector, spec: { ...bySelector.spec, validationActions: ['Warn'] } }), context);
    expect(req.warnings).toHaveLength(1);
    await expect(dispatch(request(deployment(2)), hooksOf(PARAMETERISED, bySelector), context)).resolves.toBeUndefined();
  });

  it('a missing param refuses with parameterNotFoundAction Deny and skips the binding with Allow', async () => {
    const err = await refusal(dispatch(request(deployment(5)), hooksOf(PARAMETERISED, byName), contextWith()));
    expect(err.message).toContain(
      "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    const allow = binding({ paramRef: { name: 'limits', parameterNotFoundAction: 'Allow' } });
    await expect(dispatch(request(deployment(5)), hooksOf(PARAMETERISED, allow), contextWith())).resolves.toBeUndefined();
    const ignore = policy({ ...PARAMETERISED.spec, failurePolicy: 'Ignore' });
    await expect(dispatch(request(deployment(5)), hooksOf(ignore, byName), contextWith())).resolves.toBeUndefined();
  });
});

describe('matching', () => {
  it('applies a binding only where its matchResources select the request', async () => {
    const prodOnly = binding({ matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } });
    const p = policy({ validations: [{ expression: 'object.spec.replicas < 3' }] });
    await refusal(dispatch(request(deployment(5)), hooksOf(p, prodOnly), contextWith()));
    const inDev = request({ ...deployment(5), metadata: { name: 'web', namespace: 'team-b' } }, { namespace: 'team-b' });
    await expect(dispatch(inDev, hooksOf(p, prodOnly), contextWith())).resolves.toBeUndefined();
  });

  it('skips a policy whose matchConstraints leave the request out, or whose matchConditions are not all true', async () => {
    const p = policy({
      matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
      validations: [{ expression: 'false' }],
    });
    await refusal(dispatch(request(deployment(1)), hooksOf(p, binding()), contextWith()));
    const bySystem = request(deployment(1), { user: { username: 'system:admin', groups: [] } });
    await expect(dispatch(bySystem, hooksOf(p, binding()), contextWith())).resolves.toBeUndefined();
    const pods = request(deployment(1), { resource: { group: '', version: 'v1', resource: 'pods' }, kind: { group: '', version: 'v1', kind: 'Pod' } });
    await expect(dispatch(pods, hooksOf(p, binding()), contextWith())).resolves.toBeUndefined();
  });
});

describe('expressions', () => {
  it('see request, oldObject, namespaceObject and variables (evaluated on first use)', async () => {
    const p = policy({
      variables: [
        { name: 'growth', expression: 'object.spec.replicas - oldObject.spec.replicas' },
        { name: 'limit', expression: "namespaceObject.metadata.labels.env == 'prod' ? 2 : 10" },
        { name: 'unused', expression: 'object.nothing.here' },
      ],
      validations: [
        {
          expression: 'variables.growth <= variables.limit',
          messageExpression: "request.userInfo.username + ' may not add ' + string(variables.growth) + ' replicas at once in ' + request.namespace",
        },
      ],
    });
    const update = (from: number, to: number, namespace = 'team-a') =>
      request({ ...deployment(to), metadata: { name: 'web', namespace } }, { operation: 'UPDATE', namespace, oldObject: deployment(from) });
    const err = await refusal(dispatch(update(1, 5), hooksOf(p, binding()), contextWith()));
    expect(err.message).toContain('denied request: alice may not add 4 replicas at once in team-a');
    await expect(dispatch(update(1, 3), hooksOf(p, binding()), contextWith())).resolves.toBeUndefined();
    await expect(dispatch(update(1, 5, 'team-b'), hooksOf(p, binding()), contextWith())).resolves.toBeUndefined();
  });

  it('an expression that fails is an error settled by failurePolicy', async () => {
    const p = policy({ validations: [{ expression: 'object.spec.paused == false' }] });
    const err = await refusal(dispatch(request(deployment(1)), hooksOf(p, binding()), contextWith()));
    expect(err.message).toContain("denied request: expression 'object.spec.paused == false' resulted in error: no such key: paused");
    await expect(dispatch(request(deployment(1)), hooksOf(policy({ ...p.spec, failurePolicy: 'Ignore' }), binding()), contextWith())).resolves.toBeUndefined();
  });

  it('stops an expression at the per-call cost limit', async () => {
    const p = policy({
      validations: [
        {
          expression:
            'object.metadata.name.size() > 0 && [1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))',
        },
      ],
    });
    const err = await refusal(dispatch(request(deployment(1)), hooksOf(p, binding()), contextWith()));
    expect(err.message).toContain('resulted in error: operation cancelled: actual cost limit exceeded');
  });

  it('does not compile undeclared names; stored anyway, such a policy fails per failurePolicy', async () => {
    const p = policy({ validations: [{ expression: 'objekt.spec.replicas < 3' }], matchConditions: [{ name: 'm', expression: 'size(' }] });
    const causes = policyCompileCauses(p);
    expect(causes.map((c) => c.field)).toEqual(['spec.validations[0].expression', 'spec.matchConditions[0].expression']);
    expect(causes[0]!.message).toContain("compilation failed: ERROR: <input>:1:1: undeclared reference to 'objekt'");
    const ok = policy({ validations: [{ expression: 'objekt.spec.replicas < 3' }] });
    const err = await refusal(dispatch(request(deployment(1)), hooksOf(ok, binding()), contextWith()));
    expect(err.message).toContain("denied request: compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'objekt'");
    expect(policyCompileCauses(policy({ validations: [{ expression: "'a string'" }] }))[0]!.message).toContain('must evaluate to bool');
    expect(policyCompileCauses(PARAMETERISED)).toEqual([]);
  });

  it('ask the authorizers through `authorizer`: as the user who asks, as another identity, about a path', async () => {
    const p = policy({
      validations: [
        {
          expression: "authorizer.group('apps').resource('deployments').namespace(request.namespace).check('create').allowed()",
          messageExpression: "'not allowed: ' + authorizer.requestResource.check('create').reason()",
        },
        {
          expression:
            "authorizer.serviceAccount('team-a', 'deployer').group('apps').resource('deployments').namespace('team-a').name('web').check('delete').allowed()",
          message: 'the deployer must be able to delete it',
        },
        { expression: "authorizer.path('/metrics').check('get').reason() == 'metrics are public'" },
        { expression: "authorizer.group('').resource('pods').check('explode').errored()", message: 'an authorizer error reads as errored()' },
      ],
    });
    await expect(dispatch(request(deployment(1)), hooksOf(p, binding()), contextWith())).resolves.toBeUndefined();
    const bob = request(deployment(1), { user: { username: 'bob', groups: [] } });
    const err = await refusal(dispatch(bob, hooksOf(p, binding()), contextWith()));
    expect(err.message).toMatch(/denied request: not allowed:$/);
    const inTeamB = request({ ...deployment(1), metadata: { name: 'web', namespace: 'team-b' } }, { namespace: 'team-b' });
    expect((await refusal(dispatch(inTeamB, hooksOf(p, binding()), contextWith()))).message).toContain('denied request: not allowed');
  });

  it('runs dependent checks in rounds, and charges each check its cost', async () => {
    const dependent = policy({
      validations: [
        {
          expression:
            "authorizer.group('apps').resource('deployments').namespace(authorizer.path('/metrics').check('get').reason() == 'metrics are public' ? 'team-a' : 'x').check('create').allowed()",
        },
      ],
    });
    await expect(dispatch(request(deployment(1)), hooksOf(dependent, binding()), contextWith())).resolves.toBeUndefined();
    const tooMany = policy({ validations: [{ expression: "['a','b','c'].all(v, authorizer.path('/' + v).check('get').allowed() || true)" }] });
    expect((await refusal(dispatch(request(deployment(1)), hooksOf(tooMany, binding()), contextWith()))).message).toContain(
      'resulted in error: operation cancelled: actual cost limit exceeded',
    );
  });
});
