import { errors, type Namespace, type ValidatingAdmissionPolicy } from '@skiff/api';
import { createLoopbackClient } from '@skiff/client';
import { ADMISSION_STAGE, definePlugin, LIFECYCLE_STAGE, packageInfo, type AdmissionRequest, type ResourceRegistry } from '@skiff/kernel';
import { policyCompileCauses } from './compile.js';
import { dispatch, type DispatchContext } from './dispatch.js';
import type { GroupVersionResource } from './matching.js';
import { ADMISSIONREGISTRATION_GROUP, EXEMPT_RESOURCES, PLUGIN_NAME, VALIDATING_POLICY_STAGE, VALIDATING_POLICY_USER } from './names.js';
import { ParamSource, PolicySource } from './sources.js';

/** Starts once the API server serves, before controllers and kubelets write anything. */
const POLICY_SOURCE_STAGE = LIFECYCLE_STAGE.API_SERVER + 60;

const isPolicyResource = (request: AdmissionRequest) =>
  request.resource.group === ADMISSIONREGISTRATION_GROUP && request.resource.resource === 'validatingadmissionpolicies' && !request.subresource;

function equivalentsIn(registry: ResourceRegistry) {
  return (resource: GroupVersionResource) =>
    registry
      .list()
      .filter((d) => d.group === resource.group && d.resource === resource.resource && d.version !== resource.version)
      .map((d) => ({ resource: { group: d.group, version: d.version, resource: d.resource }, kind: { group: d.group, version: d.version, kind: d.kind } }));
}

/**
 * ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1): policies of CEL validations, put to work by
 * bindings (which requests, which params, Deny / Warn / Audit), enforced in the validating admission chain as
 * kube-apiserver does. Policies whose expressions do not compile are refused when written.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['resourceRegistry', 'apiHandler'],
  apply(kernel) {
    const abort = new AbortController();
    // Set once the start began: requests that arrive while the first list of policies is under way wait for it.
    let ready: Promise<{ policies: PolicySource; params: ParamSource; registry: ResourceRegistry }> | undefined;

    kernel.lifecycle(PLUGIN_NAME, POLICY_SOURCE_STAGE, {
      async start() {
        const logger = kernel.logger.child({ component: 'validating-admission-policy' });
        const client = createLoopbackClient(kernel.resolve('apiHandler'), VALIDATING_POLICY_USER);
        const registry = kernel.resolve('resourceRegistry');
        const policies = new PolicySource(client, registry, logger);
        ready = policies.start(abort.signal).then(() => ({ policies, params: new ParamSource(client, registry, logger, abort.signal), registry }));
        await ready;
      },
      async stop() {
        abort.abort();
      },
    });

    // As upstream, a policy's expressions must compile when it is written.
    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.DEFAULTS }, async (request) => {
      if (!isPolicyResource(request) || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return;
      const policy = request.object as ValidatingAdmissionPolicy;
      const causes = policyCompileCauses(policy);
      if (causes.length) throw errors.invalid('ValidatingAdmissionPolicy', ADMISSIONREGISTRATION_GROUP, policy.metadata.name ?? '', causes);
    });

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: VALIDATING_POLICY_STAGE }, async (request) => {
      if (!ready || (request.resource.group === ADMISSIONREGISTRATION_GROUP && EXEMPT_RESOURCES.has(request.resource.resource))) return;
      const { policies, params, registry } = await ready;
      const hooks = policies.hooks();
      if (hooks.length === 0) return;
      const namespaces = new Map<string, Promise<Namespace | undefined>>();
      const namespace = (name: string) => {
        let found = namespaces.get(name);
        if (!found) {
          found = request.get({ group: '', resource: 'namespaces' }, '', name) as Promise<Namespace | undefined>;
          namespaces.set(name, found);
        }
        return found;
      };
      const context: DispatchContext = {
        namespace,
        async namespaceLabels(name) {
          const found = await namespace(name);
          if (!found) throw errors.notFound('namespaces', '', name);
          return found.metadata.labels;
        },
        equivalents: equivalentsIn(registry),
        params: (policy, binding, ns) => params.collect(policy, binding, ns, request.get.bind(request)),
        authorize: (attributes) => kernel.hooks.authorize.promise(attributes),
      };
      await dispatch(request, hooks, context);
    });
  },
});
export default plugin;

export { PLUGIN_NAME, VALIDATING_POLICY_STAGE } from './names.js';
