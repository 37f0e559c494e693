import { createLoopbackClient } from '@skiff/client';
import { ADMISSION_STAGE, AUTHORIZE_STAGE, definePlugin, LIFECYCLE_STAGE, packageInfo, type Logger } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import { AggregationController } from './aggregation.js';
import { reconcileDefaults } from './bootstrap.js';
import { checkEscalation } from './escalation.js';
import { RBAC_PREFIX, RbacPolicy } from './policy.js';

export const PLUGIN_NAME = '@skiff/plugin-authz-rbac';
export { RbacPolicy } from './policy.js';
export { ruleAllows, uncoveredRules, type PolicyRule } from './rules.js';
export { defaultPolicy, CONTROLLER_MANAGER_ROLE } from './bootstrap.js';

/** Writes the default roles at start, as kube-apiserver's own loopback identity does. */
const RECONCILER = { username: 'system:apiserver', uid: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };
/** The aggregation controller's identity: upstream's ServiceAccount for it, allowed to escalate by the default bindings. */
const AGGREGATOR = {
  username: 'system:serviceaccount:kube-system:clusterrole-aggregation-controller',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
};

/**
 * Role-based access control (kube-apiserver's `--authorization-mode=RBAC`): Roles, ClusterRoles and their bindings
 * decide, read from the store into an index by subject; upstream's default roles and bindings are reconciled at
 * start; ClusterRoles with an aggregationRule collect the rules of the roles they select; nobody writes a role or a
 * binding that grants more than they hold; `kubectl auth can-i --list` lists the rules.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['store', 'apiHandler'],
  options: {
    type: 'object',
    properties: {
      bootstrap: { type: 'boolean', default: true, description: 'Create and update the default roles and bindings at start (upstream’s bootstrap policy)' },
    },
  },
  apply(kernel, options) {
    const policy = new RbacPolicy();
    let logger: Logger = kernel.logger;
    let abort: AbortController | undefined;
    let aggregation: AggregationController | undefined;
    let seenRevision = 0;
    const waiters: { revision: number; resolve: () => void }[] = [];
    const caughtUp = (revision: number) => (seenRevision >= revision ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ revision, resolve })));

    async function follow(store: Store, signal: AbortSignal): Promise<void> {
      while (!signal.aborted) {
        try {
          for await (const event of store.watch(RBAC_PREFIX, seenRevision, signal)) {
            policy.apply(event.key, event.type === 'DELETED' ? undefined : event.object);
            seenRevision = event.revision;
            for (const waiter of waiters.splice(0)) {
              if (seenRevision >= waiter.revision) waiter.resolve();
              else waiters.push(waiter);
            }
            void aggregation?.sync();
          }
        } catch (err) {
          if (signal.aborted) return;
          logger.warn({ err }, 'RBAC watch ended; listing again');
          await load(store);
        }
      }
    }

    async function load(store: Store): Promise<void> {
      const { items, revision } = await store.list(RBAC_PREFIX);
      for (const key of policy.keys()) if (!items.some((item) => item.key === key)) policy.apply(key, undefined);
      for (const item of items) policy.apply(item.key, item.object);
      seenRevision = revision;
    }

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER - 10, {
      async start() {
        logger = kernel.logger.child({ component: PLUGIN_NAME });
        const store = kernel.resolve('store');
        abort = new AbortController();
        await load(store);
        void follow(store, abort.signal);
      },
      async stop() {
        abort?.abort();
        aggregation?.stop();
      },
    });

    kernel.lifecycle(`${PLUGIN_NAME}/bootstrap`, LIFECYCLE_STAGE.API_SERVER + 10, {
      async start() {
        const handler = kernel.resolve('apiHandler');
        if (options.bootstrap) {
          const written = await reconcileDefaults(createLoopbackClient(handler, RECONCILER));
          await caughtUp(written);
        }
        aggregation = new AggregationController(policy, createLoopbackClient(handler, AGGREGATOR), logger);
        const before = policy.generation;
        await aggregation.sync();
        if (policy.generation !== before) await caughtUp(kernel.resolve('store').revision());
      },
      async stop() {},
    });

    kernel.hooks.authorize.tap({ name: PLUGIN_NAME, stage: AUTHORIZE_STAGE.DEFAULT }, (attributes) => policy.authorize(attributes));

    kernel.hooks.authorizationRules.tap(PLUGIN_NAME, (request) => {
      for (const rule of policy.rulesFor(request.user, request.namespace)) {
        if (rule.nonResourceURLs?.length) request.nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs });
        else
          request.resourceRules.push({
            verbs: rule.verbs,
            apiGroups: rule.apiGroups ?? [],
            resources: rule.resources ?? [],
            ...(rule.resourceNames?.length ? { resourceNames: rule.resourceNames } : {}),
          });
      }
    });

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.LIMITS }, (request) => checkEscalation(request, policy, kernel.hooks));
  },
});
