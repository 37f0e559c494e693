import { errors, parseJsonPath, type StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { createLoopbackClient } from '@skiff/client';
import { ADMISSION_STAGE, definePlugin, LIFECYCLE_STAGE, packageInfo } from '@skiff/kernel';
import type { CustomResourceDefinition } from './crd.js';
import { APIEXTENSIONS_USER, CLEANUP_FINALIZER, PLUGIN_NAME } from './names.js';
import { checkSchema } from './schema/index.js';
import { jsonEqual } from './schema/node.js';
import { checkPatternTotals, patternTotals, withinPatternTotals } from './schema/patterns.js';
import { CrdServing } from './serving.js';

/** Starts right after the API server, so custom resources are served before controllers and kubelets start. */
const APIEXTENSIONS_STAGE = LIFECYCLE_STAGE.API_SERVER + 50;

const isCrd = (resource: { group: string; resource: string }) => resource.group === 'apiextensions.k8s.io' && resource.resource === 'customresourcedefinitions';

/**
 * CustomResourceDefinitions served like built-in kinds: each CRD's versions become kinds of the API server (discovery,
 * OpenAPI, tables, server-side apply), custom resources are pruned, defaulted and validated by the version's
 * structural schema (CEL rules included), and deleting a CRD deletes its custom resources.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['resourceRegistry', 'apiHandler'],
  apply(kernel) {
    const abort = new AbortController();

    kernel.lifecycle(PLUGIN_NAME, APIEXTENSIONS_STAGE, {
      async start() {
        const logger = kernel.logger.child({ component: 'apiextensions' });
        const client = createLoopbackClient(kernel.resolve('apiHandler'), APIEXTENSIONS_USER);
        await new CrdServing(kernel.resolve('resourceRegistry'), client, logger).start(abort.signal);
      },
      async stop() {
        abort.abort();
      },
    });

    // Every CRD carries the cleanup finalizer from its creation, so its custom resources go before it does.
    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.DEFAULTS }, async (request) => {
      if (!isCrd(request.resource) || request.operation !== 'CREATE' || request.subresource) return;
      const metadata = (request.object as CustomResourceDefinition).metadata;
      if (!metadata.finalizers?.includes(CLEANUP_FINALIZER)) metadata.finalizers = [...(metadata.finalizers ?? []), CLEANUP_FINALIZER];
    });

    // A version's schema must be structural, its CEL rules must compile and fit the cost limits, its
    // patterns the compile limits. Like upstream, an update holds only the versions whose schema it
    // changes to the cost limits; the same goes for the pattern limits (totals: an update may not grow them).
    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.DEFAULTS }, async (request) => {
      if (!isCrd(request.resource) || (request.operation !== 'CREATE' && request.operation !== 'UPDATE') || request.subresource) return;
      const crd = request.object as CustomResourceDefinition;
      const old = request.operation === 'UPDATE' ? (request.oldObject as CustomResourceDefinition | undefined) : undefined;
      const schemas = (versions: CustomResourceDefinition['spec']['versions'] | undefined) => (versions ?? []).map((v) => v.schema?.openAPIV3Schema);
      const totals = patternTotals(schemas(crd.spec?.versions));
      const causes: StatusCause[] = [];
      // Over the totals (refused, or stored so before the limits) patterns are not compiled to check them.
      const compilePatterns = withinPatternTotals(totals);
      (crd.spec?.versions ?? []).forEach((version, i) => {
        const schema = version.schema?.openAPIV3Schema;
        const stored = old?.spec?.versions?.find((v) => v.name === version.name)?.schema?.openAPIV3Schema;
        const changed = !(schema && stored && jsonEqual(schema, stored));
        if (schema)
          causes.push(...checkSchema(schema, `spec.versions[${i}].schema.openAPIV3Schema`, { costs: changed, patternLimits: changed, compilePatterns }));
        (version.additionalPrinterColumns ?? []).forEach((column, j) => {
          const field = `spec.versions[${i}].additionalPrinterColumns[${j}].jsonPath`;
          try {
            parseJsonPath(column.jsonPath ?? '');
          } catch (err) {
            causes.push(fieldErrors.invalid(field, column.jsonPath, (err as Error).message));
          }
        });
      });
      causes.push(...checkPatternTotals(totals, old ? patternTotals(schemas(old.spec?.versions)) : undefined, 'spec.versions'));
      if (causes.length) throw errors.invalid('CustomResourceDefinition', 'apiextensions.k8s.io', crd.metadata.name ?? '', causes);
    });
  },
});
export default plugin;

export { PLUGIN_NAME } from './names.js';
