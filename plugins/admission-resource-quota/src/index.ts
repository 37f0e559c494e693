import { createLoopbackClient } from '@skiff/client';
import { RESOURCES, type ResourceQuota } from '@skiff/api';
import { ADMISSION_STAGE, definePlugin, packageInfo, type ApiClient, type PluginOptions } from '@skiff/kernel';
import type {} from '@skiff/store';
import { QuotaAdmission } from './admission.js';
import { PLUGIN_NAME, QUOTA_ADMISSION_USER } from './names.js';

/**
 * ResourceQuota admission: a write that would take a namespace past one of its quotas is refused
 * (`exceeded quota: …`), and what is admitted is charged to the quotas' status.used before it is stored.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['store', 'apiHandler'],
  apply(kernel) {
    let client: ApiClient | undefined;
    const admission = new QuotaAdmission({
      // Read from the store under the API server's key layout: one consistent read, no trip through the pipeline.
      async list(collection, namespace) {
        const prefix = collection.group
          ? `/registry/${collection.group}/${collection.resource}/${namespace}/`
          : `/registry/${collection.resource}/${namespace}/`;
        const { items } = await kernel.resolve('store').list(prefix);
        return items.map((item) => item.object);
      },
      writeStatus(quota) {
        // Through the API server like any status write (audited, watched); the API handler exists once requests arrive.
        client ??= createLoopbackClient(kernel.resolve('apiHandler'), QUOTA_ADMISSION_USER);
        return client.updateStatus<ResourceQuota>(RESOURCES.resourcequotas, quota);
      },
      isOwnWrite: (request) => request.user.uid === QUOTA_ADMISSION_USER.uid && request.user.username === QUOTA_ADMISSION_USER.username,
      logger: kernel.logger.child({ component: PLUGIN_NAME }),
    });
    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.QUOTA }, (request) => admission.quotaWrite(request));
    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.QUOTA }, (request) => admission.admit(request));
  },
});
export default plugin;

export type ResourceQuotaAdmissionOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME, QUOTA_ADMISSION_USER } from './names.js';
export { QuotaAdmission, type QuotaAdmissionDeps } from './admission.js';
export { amountsOf, formatAmount, toList, type Amounts } from './amounts.js';
export { usageOf, podCounts, collectionsOfKey, countKey, type Collection } from './usage.js';
export { trackedKeys, scopeRequirements, isBestEffort } from './scopes.js';
export { collectionsOf, addObjectUsage, usedByStoredObjects, type CollectionLister } from './recount.js';
export { missingResources } from './constraints.js';
