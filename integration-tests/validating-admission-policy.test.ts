import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// ValidatingAdmissionPolicy in a real `skiff up` (the dev preset plus @skiff/plugin-admission-validating-policy and the audit log),
// driven by the real kubectl 1.36: a policy with a ConfigMap param and a Deny binding refuses a Deployment
// with too many replicas in kube-apiserver's words, only in the namespaces its binding selects; a Warn binding
// makes kubectl print a warning and lets the Deployment in; an Audit binding and auditAnnotations reach the audit
// log (@skiff/plugin-audit-log); a DELETE is guarded through oldObject; a policy whose expression does not
// compile is refused.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('validating-admission-policy');
const cacheDir = tempDir('validating-admission-policy-cache');
let skiff: RunningSkiff;
const { kubectl, ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

beforeAll(async () => {
  writeFileSync(join(project, 'skiff.config.mjs'), `export default { plugins: ['@skiff/plugin-admission-validating-policy', '@skiff/plugin-audit-log'] };\n`);
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const MAX_REPLICAS_POLICY = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed the limit of ' + params.data.maxReplicas + ' in ' + request.namespace"
`;

const namespaceWithLimit = (name: string, labels: string) => `
apiVersion: v1
kind: Namespace
metadata:
  name: ${name}
  labels: {${labels}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: replica-limits
  namespace: ${name}
data:
  maxReplicas: "3"
`;

const DENY_BINDING = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas-prod
spec:
  policyName: max-replicas
  validationActions: [Deny]
  paramRef:
    name: replica-limits
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        env: prod
`;

const createDeployment = (name: string, namespace: string, replicas: number, ...extra: string[]) =>
  kubectl(['create', 'deployment', name, '--image=nginx', `--replicas=${replicas}`, '-n', namespace, ...extra]);

describe('ValidatingAdmissionPolicy through kubectl 1.36', () => {
  it('refuses a policy whose expression does not compile, naming the field', async () => {
    const broken = MAX_REPLICAS_POLICY.replace('name: max-replicas', 'name: broken').replace('object.spec.replicas <=', 'objekt.spec.replicas <=');
    const result = await kubectl(['apply', '-f', '-'], broken);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('The ValidatingAdmissionPolicy "broken" is invalid: spec.validations[0].expression: Invalid value:');
    expect(result.stderr).toContain("compilation failed: ERROR: <input>:1:1: undeclared reference to 'objekt'");
  });

  it('a Deny binding with a ConfigMap param refuses 5 replicas with the messageExpression, within about a second of being written', async () => {
    await apply(namespaceWithLimit('team-prod', 'env: prod') + '---' + namespaceWithLimit('team-dev', 'env: dev'));
    await apply(MAX_REPLICAS_POLICY);
    await apply(DENY_BINDING);
    const written = Date.now();
    let refused = await createDeployment('web', 'team-prod', 5, '--dry-run=server');
    while (refused.code === 0 && Date.now() - written < 5_000) refused = await createDeployment('web', 'team-prod', 5, '--dry-run=server');
    const tookEffectMs = Date.now() - written;
    expect(tookEffectMs).toBeLessThan(2_000);

    const result = await createDeployment('web', 'team-prod', 5);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim()).toBe(
      'error: failed to create deployment: deployments.apps "web" is forbidden: ' +
        "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-prod' denied request: replicas 5 exceed the limit of 3 in team-prod",
    );
    const applied = await kubectl(
      ['apply', '-f', '-'],
      `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"team-prod"},"spec":{"replicas":5,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
    );
    expect(applied.code).not.toBe(0);
    expect(applied.stderr.trim()).toBe(
      'The deployments "web" is invalid: : ' +
        "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-prod' denied request: replicas 5 exceed the limit of 3 in team-prod",
    );
    await ok('create', 'deployment', 'small', '--image=nginx', '--replicas=3', '-n', 'team-prod');
    const scaledUp = await kubectl(['patch', 'deployment', 'small', '-n', 'team-prod', '-p', '{"spec":{"replicas":4}}']);
    expect(scaledUp.code).not.toBe(0);
    expect(scaledUp.stderr).toContain('denied request: replicas 4 exceed the limit of 3 in team-prod');
  });

  it('applies the namespace-selector binding only to labelled namespaces', async () => {
    await ok('create', 'deployment', 'web', '--image=nginx', '--replicas=5', '-n', 'team-dev');
    await ok('label', 'namespace', 'team-dev', 'env=prod', '--overwrite');
    const result = await createDeployment('web2', 'team-dev', 5);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-prod' denied request: replicas 5 exceed the limit of 3 in team-dev",
    );
  });

  it('reads the param as it is now: a raised limit admits what it refused', async () => {
    await ok('patch', 'configmap', 'replica-limits', '-n', 'team-prod', '-p', '{"data":{"maxReplicas":"6"}}');
    const started = Date.now();
    let result = await createDeployment('web', 'team-prod', 5, '--dry-run=server');
    while (result.code !== 0 && Date.now() - started < 5_000) result = await createDeployment('web', 'team-prod', 5, '--dry-run=server');
    expect(result.code).toBe(0);
  });

  it('a Warn binding makes kubectl print a warning and admits the Deployment', async () => {
    await apply(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-advice
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 2"
    message: "more than 2 replicas in a staging namespace"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-advice-staging
spec:
  policyName: replica-advice
  validationActions: [Warn]
  matchResources:
    namespaceSelector:
      matchLabels:
        env: staging
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-staging
  labels: {env: staging}
`);
    const warning =
      "Warning: Validation failed for ValidatingAdmissionPolicy 'replica-advice' with binding 'replica-advice-staging': more than 2 replicas in a staging namespace";
    const started = Date.now();
    let result = await createDeployment('api', 'team-staging', 4, '--dry-run=server');
    while (!result.stderr.includes(warning) && Date.now() - started < 5_000) result = await createDeployment('api', 'team-staging', 4, '--dry-run=server');
    result = await createDeployment('api', 'team-staging', 4);
    expect(result.code).toBe(0);
    expect(result.stderr.trim()).toBe(warning);
    expect(await ok('get', 'deployment', 'api', '-n', 'team-staging', '-o', 'jsonpath={.spec.replicas}')).toBe('4');
    const quiet = await createDeployment('quiet', 'team-staging', 2);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
  });

  it('guards deletes through oldObject, with matchConditions and the request user', async () => {
    await apply(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: protected-configmaps
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["DELETE"]
      resources: ["configmaps"]
  matchConditions:
  - name: labelled-protected
    expression: "has(oldObject.metadata.labels) && 'protected' in oldObject.metadata.labels && oldObject.metadata.labels['protected'] == 'true'"
  validations:
  - expression: "false"
    reason: Forbidden
    messageExpression: "'configmap ' + oldObject.metadata.name + ' is protected; ' + request.userInfo.username + ' must remove the label first'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: protected-configmaps
spec:
  policyName: protected-configmaps
  validationActions: [Deny]
`);
    await ok('create', 'configmap', 'keep', '-n', 'team-prod', '--from-literal=a=b');
    await ok('label', 'configmap', 'keep', '-n', 'team-prod', 'protected=true');
    await ok('create', 'configmap', 'scratch', '-n', 'team-prod', '--from-literal=a=b');
    const started = Date.now();
    let refused = await kubectl(['delete', 'configmap', 'keep', '-n', 'team-prod', '--dry-run=server']);
    while (refused.code === 0 && Date.now() - started < 5_000) refused = await kubectl(['delete', 'configmap', 'keep', '-n', 'team-prod', '--dry-run=server']);
    const result = await kubectl(['delete', 'configmap', 'keep', '-n', 'team-prod']);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim()).toMatch(
      /^Error from server \(Forbidden\): configmaps "keep" is forbidden: ValidatingAdmissionPolicy 'protected-configmaps' with binding 'protected-configmaps' denied request: configmap keep is protected; \S+ must remove the label first$/,
    );
    await ok('delete', 'configmap', 'scratch', '-n', 'team-prod');
    await ok('label', 'configmap', 'keep', '-n', 'team-prod', 'protected-');
    await ok('delete', 'configmap', 'keep', '-n', 'team-prod');
  });

  it('an Audit binding and auditAnnotations write their annotations into the audit log', async () => {
    await apply(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: require-team
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: "deployments should carry a team label"
  auditAnnotations:
  - key: replicas
    valueExpression: "'deployment ' + object.metadata.name + ' asks for ' + string(object.spec.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: require-team-audit
spec:
  policyName: require-team
  validationActions: [Audit]
  matchResources:
    namespaceSelector:
      matchLabels:
        env: staging
`);
    const auditLog = join(project, 'data', 'audit.log');
    // Audit events of creates name no object; this policy's annotation does.
    const createEvent = (name: string) =>
      readFileSync(auditLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .find((event) => event.verb === 'create' && event.annotations?.['require-team/replicas'] === `deployment ${name} asks for 1`);
    // In force once a dry run's audit event carries the policy's annotation.
    let attempt = 0;
    await waitFor(
      'the Audit binding in force',
      async () => {
        const name = `probe-${attempt++}`;
        await createDeployment(name, 'team-staging', 1, '--dry-run=server');
        return waitFor(`the audit event of ${name}`, () => createEvent(name), { timeoutMs: 1_000 }).catch(() => undefined);
      },
      CLUSTER_TIMEOUT,
    );
    expect((await createDeployment('unlabelled', 'team-staging', 1)).code).toBe(0);
    const { annotations } = await waitFor('the audit event of the create', () => createEvent('unlabelled'), CLUSTER_TIMEOUT);
    expect(JSON.parse(annotations['validation.policy.admission.k8s.io/validation_failure'])).toEqual([
      {
        message: 'deployments should carry a team label',
        policy: 'require-team',
        binding: 'require-team-audit',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
    await apply(
      `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"labelled","namespace":"team-staging","labels":{"team":"payments"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"labelled"}},"template":{"metadata":{"labels":{"app":"labelled"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
    );
    const labelled = await waitFor('the audit event of the labelled create', () => createEvent('labelled'), CLUSTER_TIMEOUT);
    expect(labelled.annotations['validation.policy.admission.k8s.io/validation_failure']).toBeUndefined();
  });

  it('type-checks policies against the kinds they match: status.typeChecking warns of a field Deployments do not have', async () => {
    await apply(MAX_REPLICAS_POLICY.replace('name: max-replicas', 'name: typo').replace('object.spec.replicas <=', 'object.spec.replica <='));
    const status = await waitFor('the typo policy status', async () => (await json('get', 'validatingadmissionpolicy', 'typo')).status, CLUSTER_TIMEOUT);
    expect(status).toEqual({
      observedGeneration: 1,
      typeChecking: {
        expressionWarnings: [
          {
            fieldRef: 'spec.validations[0].expression',
            warning:
              "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica <= int(params.data.maxReplicas)\n | ...........^",
          },
        ],
      },
    });
    expect((await json('get', 'validatingadmissionpolicy', 'max-replicas')).status).toEqual({ observedGeneration: 1, typeChecking: {} });
    await ok('delete', 'validatingadmissionpolicy', 'typo');
  });

  it('stops enforcing a binding once it is deleted', async () => {
    await ok('delete', 'validatingadmissionpolicybinding', 'max-replicas-prod');
    const started = Date.now();
    let result = await createDeployment('big', 'team-dev', 9, '--dry-run=server');
    while (result.code !== 0 && Date.now() - started < 5_000) result = await createDeployment('big', 'team-dev', 9, '--dry-run=server');
    expect(result.code).toBe(0);
  });
});
