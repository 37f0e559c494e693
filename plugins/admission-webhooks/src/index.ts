import { errors, type MutatingWebhookConfiguration, type Namespace, type ValidatingWebhookConfiguration } from '@skiff/api';
import { createLoopbackClient } from '@skiff/client';
import { ADMISSION_STAGE, definePlugin, LIFECYCLE_STAGE, packageInfo, type AdmissionRequest, type ResourceRegistry } from '@skiff/kernel';
import { WebhookConfigurations } from './configurations.js';
import { runMutating, runValidating, type DispatchContext } from './dispatch.js';
import { conditionCauses } from './match-conditions.js';
import type { GroupVersionResource } from './matching.js';
import { ADMISSIONREGISTRATION_GROUP, EXEMPT_RESOURCES, MUTATING_WEBHOOK_STAGE, PLUGIN_NAME, VALIDATING_WEBHOOK_STAGE, WEBHOOK_WATCH_USER } from './names.js';
import { ServiceResolver } from './service-resolver.js';

/** Starts once the API server serves, before controllers and kubelets write anything. */
const WEBHOOK_SOURCE_STAGE = LIFECYCLE_STAGE.API_SERVER + 61;

const isConfiguration = (request: AdmissionRequest) =>
  request.resource.group === ADMISSIONREGISTRATION_GROUP &&
  (request.resource.resource === 'mutatingwebhookconfigurations' || request.resource.resource === 'validatingwebhookconfigurations') &&
  !request.subresource;

const isExempt = (request: AdmissionRequest) => request.resource.group === ADMISSIONREGISTRATION_GROUP && EXEMPT_RESOURCES.has(request.resource.resource);

function equivalentsIn(registry: ResourceRegistry) {
  return (resource: GroupVersionResource) =>
    registry
      .list()
      .filter((d) => d.group === resource.group && d.resource === resource.resource && d.version !== resource.version)
      .map((d) => ({ resource: { group: d.group, version: d.version, resource: d.resource }, kind: { group: d.group, version: d.version, kind: d.kind } }));
}

/**
 * Mutating and validating admission webhooks: the Mutating- and ValidatingWebhookConfigurations
 * (admissionregistration.k8s.io/v1) are watched, and every write they match is sent to their HTTPS endpoints as
 * an AdmissionReview, the way kube-apiserver does.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['resourceRegistry', 'apiHandler'],
  apply(kernel) {
    const abort = new AbortController();
    let configurations: WebhookConfigurations | undefined;
    let registry: ResourceRegistry | undefined;
    const logger = kernel.logger.child({ component: 'admission-webhooks' });

    kernel.lifecycle(PLUGIN_NAME, WEBHOOK_SOURCE_STAGE, {
      async start() {
        const client = createLoopbackClient(kernel.resolve('apiHandler'), WEBHOOK_WATCH_USER);
        registry = kernel.resolve('resourceRegistry');
        const resolver = new ServiceResolver(client, logger, abort.signal);
        const source = new WebhookConfigurations(client, logger, resolver);
        await source.start(abort.signal);
        configurations = source;
      },
      async stop() {
        abort.abort();
        configurations?.close();
      },
    });

    const contextFor = (request: AdmissionRequest, reg: ResourceRegistry): DispatchContext => {
      const namespaces = new Map<string, Promise<Record<string, string> | undefined>>();
      return {
        logger,
        equivalents: equivalentsIn(reg),
        namespaceLabels(name) {
          let labels = namespaces.get(name);
          if (!labels) {
            labels = request.get({ group: '', resource: 'namespaces' }, '', name).then((ns) => (ns as Namespace | undefined)?.metadata.labels);
            namespaces.set(name, labels);
          }
          return labels;
        },
      };
    };

    // As upstream, a configuration's match conditions must compile when it is written.
    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.DEFAULTS }, async (request) => {
      if (!isConfiguration(request) || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return;
      const configuration = request.object as MutatingWebhookConfiguration | ValidatingWebhookConfiguration;
      const causes = conditionCauses(configuration.webhooks);
      if (causes.length) throw errors.invalid(request.kind.kind, ADMISSIONREGISTRATION_GROUP, configuration.metadata.name ?? '', causes);
    });

    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: MUTATING_WEBHOOK_STAGE }, async (request) => {
      if (!configurations || !registry || isExempt(request)) return;
      const webhooks = configurations.mutating.webhooks();
      if (webhooks.length > 0) await runMutating(webhooks, request, contextFor(request, registry));
    });

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: VALIDATING_WEBHOOK_STAGE }, async (request) => {
      if (!configurations || !registry || isExempt(request)) return;
      const webhooks = configurations.validating.webhooks();
      if (webhooks.length > 0) await runValidating(webhooks, request, contextFor(request, registry));
    });
  },
});
export default plugin;

export { MUTATING_WEBHOOK_STAGE, PLUGIN_NAME, VALIDATING_WEBHOOK_STAGE } from './names.js';
