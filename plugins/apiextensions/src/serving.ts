// Keeps the API server's resource registry in step with the CRDs stored: each accepted CRD's versions are
// registered as kinds (discovery and OpenAPI follow the registry), its status says whether its names were
// accepted and it is established, and a deleted CRD's custom resources are deleted before it goes.
import { errorMessage, isApiError, RESOURCES, type CustomResourceDefinitionCondition, type ResourceDefinition } from '@skiff/api';
import { SharedInformer } from '@skiff/client';
import type { ApiClient, Logger, ResourceRegistry } from '@skiff/kernel';
import { WebhookConverter } from './conversion/webhook.js';
import { conditionOf, storageVersion, type CustomResourceDefinition } from './crd.js';
import { customResourceDefinitions } from './definitions.js';
import { CLEANUP_FINALIZER } from './names.js';

const CLEANUP_POLL_MS = 100;
/** A replaced webhook client's connections close once conversions still under way have had their 30 s. */
const RETIRE_WEBHOOK_MS = 35_000;

function retire(webhook: WebhookConverter | undefined): void {
  if (webhook) setTimeout(() => webhook.close(), RETIRE_WEBHOOK_MS).unref();
}

interface Served {
  /** uid/generation the definitions were built from: a status write does not rebuild them. */
  builtFrom: string;
  group: string;
  plural: string;
  versions: string[];
  /** The conversion webhook's client (its connection pool), for the `Webhook` strategy. */
  webhook?: WebhookConverter;
}

export class CrdServing {
  private readonly served = new Map<string, Served>();
  private readonly cleaning = new Set<string>();
  private readonly informer: SharedInformer<CustomResourceDefinition>;
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly client: ApiClient,
    private readonly logger: Logger,
  ) {
    this.informer = new SharedInformer<CustomResourceDefinition>(
      client,
      RESOURCES.customresourcedefinitions,
      {},
      { resyncMs: 0, logger, retry: { initialMs: 100, maxMs: 5_000 } },
    );
    this.informer.addHandlers({
      add: (crd) => this.schedule(crd),
      update: (_, crd) => this.schedule(crd),
      delete: (crd) => this.forget(crd),
    });
  }

  /** Lists the stored CRDs and serves them before resolving; keeps following changes until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    void this.informer.run(signal);
    await this.informer.waitForSync(signal);
    await Promise.all(this.pending.values());
  }

  /** One sync at a time per CRD, in event order. */
  private schedule(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name!;
    const previous = this.pending.get(name) ?? Promise.resolve();
    const next = previous
      .then(() => this.sync(this.informer.get(name) ?? crd))
      .catch((err: Error) => this.logger.warn({ crd: name, err: err.message }, 'could not sync a CustomResourceDefinition'))
      .finally(() => {
        if (this.pending.get(name) === next) this.pending.delete(name);
      });
    this.pending.set(name, next);
  }

  private async sync(crd: CustomResourceDefinition): Promise<void> {
    const name = crd.metadata.name!;
    let problem = this.namesConflict(crd);
    if (!problem) {
      try {
        this.serve(crd);
      } catch (err) {
        // Admission refuses what cannot be served; a CRD stored before that rule still gets a condition saying why.
        problem = { type: 'Established', status: 'False', reason: 'InstallationFailure', message: errorMessage(err) };
      }
    }
    await this.writeStatus(crd, problem);
    if (crd.metadata.deletionTimestamp && !this.cleaning.has(name)) {
      this.cleaning.add(name);
      void this.cleanup(crd).finally(() => this.cleaning.delete(name));
    }
  }

  /** A plural or kind another kind of the group already uses (a built-in, or another CRD). */
  private namesConflict(crd: CustomResourceDefinition): CustomResourceDefinitionCondition | undefined {
    const { group, names } = crd.spec;
    const mine = this.served.get(crd.metadata.name!);
    const byPlural = this.registry.get(group, names.plural);
    if (byPlural && !(mine && mine.plural === names.plural && mine.group === group))
      return { type: 'NamesAccepted', status: 'False', reason: 'PluralConflict', message: `"${names.plural}" is already in use` };
    const byKind = this.registry.byKind(group, names.kind);
    if (byKind && byKind.resource !== names.plural)
      return { type: 'NamesAccepted', status: 'False', reason: 'KindConflict', message: `"${names.kind}" is already in use` };
    return undefined;
  }

  private serve(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name!;
    const builtFrom = `${crd.metadata.uid}/${crd.metadata.generation ?? 0}`;
    const previous = this.served.get(name);
    if (previous?.builtFrom === builtFrom) return;
    const conversion = crd.spec.conversion;
    const webhook = conversion?.strategy === 'Webhook' && conversion.webhook ? new WebhookConverter(conversion.webhook, this.client) : undefined;
    const definitions: ResourceDefinition[] = customResourceDefinitions(crd, webhook);
    if (previous) this.registry.unregister(previous.group, previous.plural);
    retire(previous?.webhook);
    for (const definition of definitions) this.registry.register(definition);
    this.served.set(name, {
      builtFrom,
      group: crd.spec.group,
      plural: crd.spec.names.plural,
      versions: definitions.map((d) => d.version),
      ...(webhook ? { webhook } : {}),
    });
    this.logger.info({ crd: name, versions: definitions.map((d) => d.version) }, 'serving custom resources');
  }

  private forget(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name!;
    const previous = this.served.get(name);
    if (!previous) return;
    this.registry.unregister(previous.group, previous.plural);
    retire(previous.webhook);
    this.served.delete(name);
    this.logger.info({ crd: name }, 'stopped serving custom resources');
  }

  /** NamesAccepted, Established (and Terminating while being deleted), acceptedNames, storedVersions. */
  private async writeStatus(crd: CustomResourceDefinition, conflict: CustomResourceDefinitionCondition | undefined): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const accepted = conflict?.type !== 'NamesAccepted';
    const wanted: CustomResourceDefinitionCondition[] = [
      accepted ? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' } : conflict!,
      conflict?.type === 'Established'
        ? conflict
        : accepted
          ? { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }
          : { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' },
    ];
    if (crd.metadata.deletionTimestamp)
      wanted.push({ type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
    const conditions = wanted.map((condition) => {
      const current = conditionOf(crd, condition.type);
      const same = current && current.status === condition.status && current.reason === condition.reason && current.message === condition.message;
      return same ? current : { ...{}, ...condition, lastTransitionTime: now };
    });
    const stored = storageVersion(crd)?.name;
    const storedVersions = [...new Set([...(crd.status?.storedVersions ?? []), ...(stored ? [stored] : [])])];
    const acceptedNames = accepted ? crd.spec.names : (crd.status?.acceptedNames ?? { plural: '', kind: '' });
    const status = { ...{}, ...crd.status, conditions, acceptedNames, storedVersions };
    if (JSON.stringify(status) === JSON.stringify(crd.status)) return;
    try {
      await this.client.updateStatus<CustomResourceDefinition>(RESOURCES.customresourcedefinitions, { ...{}, ...crd, status });
    } catch (err) {
      // A newer version of the CRD arrives as another event and is synced then.
      if (!isApiError(err, 'Conflict')) throw err;
    }
  }

  /** Deletes every custom resource of a CRD being deleted, then lets it go by removing the cleanup finalizer. */
  private async cleanup(crd: CustomResourceDefinition): Promise<void> {
    const name = crd.metadata.name!;
    const stored = storageVersion(crd);
    const type = stored && {
      group: crd.spec.group,
      version: stored.name,
      resource: crd.spec.names.plural,
      kind: crd.spec.names.kind,
      namespaced: crd.spec.scope === 'Namespaced',
    };
    if (type && this.served.has(name)) {
      for (;;) {
        const items = (await this.client.list(type)).items;
        if (items.length === 0) break;
        await Promise.all(
          items.map((item) =>
            this.client.delete(type, item.metadata.name!, item.metadata.namespace, { propagationPolicy: 'Background' }).catch((err: unknown) => {
              if (!isApiError(err, 'NotFound')) throw err;
            }),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, CLEANUP_POLL_MS));
      }
    }
    for (;;) {
      const current = await this.client.get<CustomResourceDefinition>(RESOURCES.customresourcedefinitions, name).catch(() => undefined);
      if (!current || !current.metadata.finalizers?.includes(CLEANUP_FINALIZER)) return;
      const finalizers = current.metadata.finalizers.filter((f) => f !== CLEANUP_FINALIZER);
      try {
        await this.client.update(RESOURCES.customresourcedefinitions, { ...{}, ...current, metadata: { ...{}, ...current.metadata, finalizers } });
        return;
      } catch (err) {
        if (!isApiError(err, 'Conflict')) throw err;
      }
    }
  }
}
