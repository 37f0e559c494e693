import { describe, expect, it } from 'vitest';
import { ApiError, type KubeObject, type Namespace, type Pod } from '@skiff/api';
import { AdmissionError, Kernel, type AdmissionRequest } from '@skiff/kernel';
import { admissionRequest, admit } from '@skiff/testing';
import { PodSecurityAdmission } from './admission.js';
import plugin from './index.js';
import { configFromOptions } from './options.js';

const namespace = (name: string, labels: Record<string, string> = {}): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

const pod = (name: string, container: Record<string, unknown> = {}, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'team', ...metadata },
    spec: { containers: [{ name: 'c', image: 'nginx', ...container }], ...spec },
  }) as Pod;

const RESTRICTED_CONTAINER = {
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
};
const PRIVILEGED_CONTAINER = { securityContext: { privileged: true } };

const RESTRICTED_DETAIL =
  'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

function cluster(options: Record<string, unknown> = {}) {
  return new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);
}

/** A request in namespace `team` labelled `labels`, with warnings and audit annotations collected. */
function request(object: KubeObject, labels: Record<string, string>, overrides: Partial<AdmissionRequest> = {}) {
  return admissionRequest({ object, namespace: 'team', objects: [namespace('team', labels)], warnings: [], auditAnnotations: {}, ...overrides });
}

const deployment = (container: Record<string, unknown>): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx', ...container }] } },
    },
  }) as KubeObject;

const workload = (object: KubeObject, resource: string, group: string) => ({
  kind: { group, version: 'v1', kind: object.kind ?? '' },
  resource: { group, version: 'v1', resource },
});

describe('pods', () => {
  it("refuses a pod the enforce level forbids, with kube-apiserver's message, and records the policy", async () => {
    const req = request(pod('web'), { 'pod-security.kubernetes.io/enforce': 'restricted' });
    const refusal = await admit(cluster(), req).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(AdmissionError);
    expect(refusal).toMatchObject({
      status: 403,
      code: 'SKIFF_ERR_POD_SECURITY_FORBIDDEN',
      message: `pods "web" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`,
    });
    expect(req.warnings).toEqual([]);
    expect(req.auditAnnotations).toEqual({ 'pod-security.kubernetes.io/enforce-policy': 'restricted:latest' });
  });

  it('admits a pod that meets the level', async () => {
    const req = request(pod('web', RESTRICTED_CONTAINER), { 'pod-security.kubernetes.io/enforce': 'restricted' });
    await expect(admit(cluster(), req)).resolves.toMatchObject({ kind: 'Pod' });
    expect(req.warnings).toEqual([]);
  });

  it('warns in warn mode and annotates the audit event in audit mode, without refusing', async () => {
    const req = request(pod('web', PRIVILEGED_CONTAINER), {
      'pod-security.kubernetes.io/warn': 'baseline',
      'pod-security.kubernetes.io/audit': 'restricted',
      'pod-security.kubernetes.io/audit-version': 'v1.30',
    });
    await admit(cluster(), req);
    expect(req.warnings).toEqual(['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)']);
    expect(req.auditAnnotations).toEqual({
      'pod-security.kubernetes.io/enforce-policy': 'privileged:latest',
      'pod-security.kubernetes.io/audit-violations': `would violate PodSecurity "restricted:v1.30": privileged (container "c" must not set securityContext.privileged=true), ${RESTRICTED_DETAIL}`,
    });
  });

  it('warns at the enforce level when only enforce is set and the pod passes it', async () => {
    const req = request(pod('web', RESTRICTED_CONTAINER), {
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/enforce-version': 'v1.30',
    });
    await admit(cluster(), req);
    expect(req.auditAnnotations).toEqual({ 'pod-security.kubernetes.io/enforce-policy': 'baseline:v1.30' });
    const hostNetwork = request(pod('net', RESTRICTED_CONTAINER, { hostNetwork: true }), { 'pod-security.kubernetes.io/enforce': 'baseline' });
    await expect(admit(cluster(), hostNetwork)).rejects.toThrow(
      'pods "net" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)',
    );
  });

  it('enforces the cluster defaults in unlabelled namespaces', async () => {
    const req = request(pod('web', PRIVILEGED_CONTAINER), {});
    await expect(admit(cluster({ defaults: { enforce: 'baseline' } }), req)).rejects.toThrow('violates PodSecurity "baseline:latest": privileged');
    await expect(admit(cluster(), request(pod('web', PRIVILEGED_CONTAINER), {}))).resolves.toBeDefined();
  });

  it('enforces restricted for an enforce label it cannot parse, and says so in the audit event', async () => {
    const req = request(pod('web'), { 'pod-security.kubernetes.io/enforce': 'strict' });
    await expect(admit(cluster(), req)).rejects.toThrow('violates PodSecurity "restricted:latest"');
    expect(req.auditAnnotations!['pod-security.kubernetes.io/error']).toBe(
      'Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    );
  });

  it('passes exempt namespaces, users and runtime classes, and records why', async () => {
    const kernel = cluster({ exemptions: { namespaces: ['team'], usernames: ['system:node:a'], runtimeClasses: ['kata'] } });
    const labels = { 'pod-security.kubernetes.io/enforce': 'restricted' };
    const byNamespace = request(pod('web'), labels);
    await admit(kernel, byNamespace);
    expect(byNamespace.auditAnnotations).toEqual({ 'pod-security.kubernetes.io/exempt': 'namespace' });
    const other = cluster({ exemptions: { usernames: ['system:node:a'], runtimeClasses: ['kata'] } });
    const byUser = request(pod('web'), labels, { user: { username: 'system:node:a', groups: [] } });
    await admit(other, byUser);
    expect(byUser.auditAnnotations).toEqual({ 'pod-security.kubernetes.io/exempt': 'user' });
    const byRuntime = request(pod('web', {}, { runtimeClassName: 'kata' }), labels);
    await admit(other, byRuntime);
    expect(byRuntime.auditAnnotations).toEqual({ 'pod-security.kubernetes.io/exempt': 'runtimeClass' });
    await expect(admit(other, request(pod('web', {}, { runtimeClassName: 'runc' }), labels))).rejects.toThrow('violates PodSecurity');
  });

  it('lets updates through that change no image, and checks those that do', async () => {
    const labels = { 'pod-security.kubernetes.io/enforce': 'restricted' };
    const old = pod('web');
    const relabelled = pod('web', {}, {}, { labels: { tier: 'front' } });
    await expect(admit(cluster(), request(relabelled, labels, { operation: 'UPDATE', oldObject: old }))).resolves.toBeDefined();
    const newImage = pod('web', { image: 'nginx:2' });
    await expect(admit(cluster(), request(newImage, labels, { operation: 'UPDATE', oldObject: old }))).rejects.toThrow('violates PodSecurity');
  });

  it('checks ephemeral containers added through pods/ephemeralcontainers, and ignores other subresources', async () => {
    const labels = { 'pod-security.kubernetes.io/enforce': 'baseline' };
    const old = pod('web');
    const debugged = pod('web', {}, { ephemeralContainers: [{ name: 'debug', image: 'busybox', securityContext: { privileged: true } }] });
    await expect(admit(cluster(), request(debugged, labels, { operation: 'UPDATE', oldObject: old, subresource: 'ephemeralcontainers' }))).rejects.toThrow(
      'pods "web" is forbidden: violates PodSecurity "baseline:latest": privileged (container "debug" must not set securityContext.privileged=true)',
    );
    const status = request(pod('web', PRIVILEGED_CONTAINER), labels, { operation: 'UPDATE', oldObject: old, subresource: 'status' });
    await expect(admit(cluster(), status)).resolves.toBeDefined();
  });
});

describe('workloads', () => {
  it("warns about a Deployment's template in an enforce namespace but never refuses it", async () => {
    const req = request(deployment({}), { 'pod-security.kubernetes.io/enforce': 'restricted' }, workload(deployment({}), 'deployments', 'apps'));
    await expect(admit(cluster(), req)).resolves.toBeDefined();
    expect(req.warnings).toEqual([`would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`]);
    expect(req.auditAnnotations).toEqual({});
  });

  it("reads each kind's template: CronJob's job template, PodTemplate's template", async () => {
    const labels = { 'pod-security.kubernetes.io/warn': 'baseline', 'pod-security.kubernetes.io/audit': 'baseline' };
    const cronJob = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c', namespace: 'team' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x', ...PRIVILEGED_CONTAINER }] } } } } },
    } as KubeObject;
    const cron = request(cronJob, labels, workload(cronJob, 'cronjobs', 'batch'));
    await admit(cluster(), cron);
    expect(cron.warnings).toEqual(['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)']);
    expect(cron.auditAnnotations!['pod-security.kubernetes.io/audit-violations']).toContain('baseline:latest');
    const podTemplate = {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 't', namespace: 'team' },
      template: { spec: { containers: [{ name: 'c', image: 'x', ...PRIVILEGED_CONTAINER }] } },
    } as KubeObject;
    const template = request(podTemplate, labels, workload(podTemplate, 'podtemplates', ''));
    await admit(cluster(), template);
    expect(template.warnings).toHaveLength(1);
  });

  it('skips workloads in namespaces that neither warn nor audit, and their subresources', async () => {
    const quiet = request(
      deployment(PRIVILEGED_CONTAINER),
      { 'pod-security.kubernetes.io/enforce': 'privileged' },
      workload(deployment({}), 'deployments', 'apps'),
    );
    await admit(cluster(), quiet);
    expect(quiet.warnings).toEqual([]);
    const scale = request(
      deployment(PRIVILEGED_CONTAINER),
      { 'pod-security.kubernetes.io/warn': 'baseline' },
      { ...workload(deployment({}), 'deployments', 'apps'), subresource: 'scale' },
    );
    await admit(cluster(), scale);
    expect(scale.warnings).toEqual([]);
  });
});

describe('namespaces', () => {
  const nsRequest = (labels: Record<string, string>, overrides: Partial<AdmissionRequest> = {}) =>
    admissionRequest({
      object: namespace('team', labels),
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      namespace: '',
      warnings: [],
      ...overrides,
    });

  it('refuses a namespace created with a label value it cannot parse (422)', async () => {
    const err = await admit(cluster(), nsRequest({ 'pod-security.kubernetes.io/enforce': 'strict' })).catch((e: ApiError) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toStatus()).toMatchObject({ code: 422, reason: 'Invalid', details: { name: 'team', kind: 'Namespace' } });
    expect((err as ApiError).message).toBe(
      'Namespace "team" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    );
    await expect(admit(cluster(), nsRequest({ 'pod-security.kubernetes.io/warn-version': '1.30', 'pod-security.kubernetes.io/audit': 'x' }))).rejects.toThrow(
      'Namespace "team" is invalid: [metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "x": must be one of privileged, baseline, restricted, ' +
        'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.30": must be "latest" or "v1.x"]',
    );
    await expect(admit(cluster(), nsRequest({ 'pod-security.kubernetes.io/enforce-version': 'v1.30' }))).resolves.toBeDefined();
  });

  it('lets an update keep labels that were already invalid, but not introduce them', async () => {
    const bad = { 'pod-security.kubernetes.io/enforce': 'strict' };
    await expect(admit(cluster(), nsRequest({ ...bad, other: 'x' }, { operation: 'UPDATE', oldObject: namespace('team', bad) }))).resolves.toBeDefined();
    await expect(admit(cluster(), nsRequest(bad, { operation: 'UPDATE', oldObject: namespace('team') }))).rejects.toThrow('is invalid');
  });

  it('warns when a namespace in the exemptions gets labels that will be ignored', async () => {
    const req = nsRequest({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/audit': 'privileged' });
    await admit(cluster({ exemptions: { namespaces: ['team'] } }), req);
    expect(req.warnings).toEqual(['namespace "team" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored']);
  });

  describe('a stricter enforce level on a namespace with pods', () => {
    const owned = (name: string, uid: string, container: Record<string, unknown>) =>
      pod(name, container, {}, { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller: true }] });
    const existing = [
      pod('zeta', PRIVILEGED_CONTAINER),
      owned('web-b', 'rs1', PRIVILEGED_CONTAINER),
      owned('web-a', 'rs1', PRIVILEGED_CONTAINER),
      pod('alpha', PRIVILEGED_CONTAINER),
      pod('host', {}, { hostPID: true }),
      pod('fine', {}),
      pod('kata', PRIVILEGED_CONTAINER, { runtimeClassName: 'kata' }),
    ];
    const admission = new PodSecurityAdmission(
      configFromOptions({ defaults: defaults(), exemptions: { usernames: [], namespaces: [], runtimeClasses: ['kata'] } }),
      async () => existing,
    );
    const labelling = async (labels: Record<string, string>, oldLabels: Record<string, string> = {}) => {
      const req = nsRequest(labels, { operation: 'UPDATE', oldObject: namespace('team', oldLabels) });
      await admission.validate(req);
      return req.warnings;
    };

    it('lists the pods it would refuse, grouped by reasons, one name each', async () => {
      expect(await labelling({ 'pod-security.kubernetes.io/enforce': 'baseline' })).toEqual([
        'existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"',
        'alpha (and 3 other pods): privileged',
        'host: host namespaces',
      ]);
    });

    it('says nothing when the enforce level is unchanged, relaxed or privileged', async () => {
      expect(await labelling({ 'pod-security.kubernetes.io/enforce': 'baseline' }, { 'pod-security.kubernetes.io/enforce': 'baseline' })).toEqual([]);
      expect(await labelling({ 'pod-security.kubernetes.io/enforce': 'baseline' }, { 'pod-security.kubernetes.io/enforce': 'restricted' })).toEqual([]);
      expect(await labelling({ 'pod-security.kubernetes.io/enforce': 'privileged' })).toEqual([]);
      expect(await labelling({ 'pod-security.kubernetes.io/warn': 'restricted' })).toEqual([]);
    });

    it('checks again when only the version changes', async () => {
      const warnings = await labelling(
        { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.30' },
        { 'pod-security.kubernetes.io/enforce': 'restricted' },
      );
      expect(warnings?.[0]).toBe('existing pods in namespace "team" violate the new PodSecurity enforce level "restricted:v1.30"');
      expect(warnings).toContain('fine: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile');
    });
  });
});

describe('options', () => {
  it("takes PodSecurityConfiguration's shape", () => {
    expect(() =>
      cluster({
        apiVersion: 'pod-security.admission.config.k8s.io/v1',
        kind: 'PodSecurityConfiguration',
        defaults: { enforce: 'baseline', 'enforce-version': 'v1.30', warn: 'restricted' },
        exemptions: { usernames: ['a'], namespaces: ['kube-system'], runtimeClasses: ['kata'] },
      }),
    ).not.toThrow();
  });

  it('refuses levels, versions and exemptions that could never work, naming the option', () => {
    expect(() => cluster({ defaults: { enforce: 'strict' } })).toThrow(
      'option "defaults.enforce" must be one of "privileged", "baseline", "restricted" (got "strict")',
    );
    expect(() => cluster({ defaults: { 'audit-version': 'v2.0' } })).toThrow('option "defaults.audit-version" must be a string matching');
    expect(() => cluster({ exemptions: { namespaces: ['Kube_System'] } })).toThrow('option "exemptions.namespaces[0]" "Kube_System" is invalid');
    expect(() => cluster({ exemptions: { usernames: ['a', 'a'] } })).toThrow('option "exemptions.usernames[1]" "a" is listed twice');
    expect(() => cluster({ exemption: {} })).toThrow('unknown option "exemption"');
  });
});

function defaults() {
  return {
    enforce: 'privileged',
    'enforce-version': 'latest',
    audit: 'privileged',
    'audit-version': 'latest',
    warn: 'privileged',
    'warn-version': 'latest',
  } as const;
}
