// What the plugin keeps in memory, from watches through an in-process client: the policies (compiled once
// per stored version) with the bindings that name them, and the params of each paramKind in use (a watch
// started the first time a policy names the kind). A change is seen within the watch's delay (milliseconds).
import {
  labelSelectorFromObject,
  RESOURCES,
  type KubeObject,
  type ResourceType,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from '@skiff/api';
import { errorMessage, isApiError } from '@skiff/api';
import { SharedInformer } from '@skiff/client';
import type { AdmissionRequest, ApiClient, Logger, ResourceRegistry } from '@skiff/kernel';
import { compilePolicy, type CompiledPolicy } from './compile.js';
import type { PolicyHook } from './dispatch.js';
import { typeCheck } from './typecheck.js';

const RETRY = { initialMs: 100, maxMs: 5_000 };
/** How long a request waits for a new param watch's first list, as upstream does. */
const PARAM_SYNC_WAIT_MS = 1_000;

export class PolicySource {
  private readonly policies: SharedInformer<ValidatingAdmissionPolicy>;
  private readonly bindings: SharedInformer<ValidatingAdmissionPolicyBinding>;
  private readonly compiled = new Map<string, CompiledPolicy>();
  private current: PolicyHook[] | undefined;
  private readonly statusWrites = new Map<string, Promise<void>>();

  constructor(
    private readonly client: ApiClient,
    private readonly registry: ResourceRegistry,
    private readonly logger: Logger,
  ) {
    const settings = { resyncMs: 0, logger, retry: RETRY };
    this.policies = new SharedInformer(client, RESOURCES.validatingadmissionpolicies, {}, settings);
    this.bindings = new SharedInformer(client, RESOURCES.validatingadmissionpolicybindings, {}, settings);
    const changed = { add: () => this.invalidate(), update: () => this.invalidate(), delete: () => this.invalidate() };
    this.policies.addHandlers(changed);
    this.bindings.addHandlers(changed);
    this.policies.addHandlers({ add: (p) => this.scheduleStatus(p), update: (_, p) => this.scheduleStatus(p) });
  }

  /** Lists policies and bindings before resolving; follows their changes until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    void this.policies.run(signal);
    void this.bindings.run(signal);
    await Promise.all([this.policies.waitForSync(signal), this.bindings.waitForSync(signal)]);
  }

  /** The policies that have bindings, in name order, each with its bindings in name order. */
  hooks(): readonly PolicyHook[] {
    this.current ??= this.build();
    return this.current;
  }

  /** A policy whose status does not describe its generation yet gets its type checking written, one write at a time per policy. */
  private scheduleStatus(policy: ValidatingAdmissionPolicy): void {
    if (policy.status?.observedGeneration === policy.metadata.generation) return;
    const name = policy.metadata.name ?? '';
    const previous = this.statusWrites.get(name) ?? Promise.resolve();
    const next = previous
      .then(() => this.writeStatus(name))
      .catch((err: unknown) => {
        if (!isApiError(err, 'Conflict') && !isApiError(err, 'NotFound'))
          this.logger.warn({ policy: name, err: errorMessage(err) }, 'could not write a policy status');
      })
      .finally(() => {
        if (this.statusWrites.get(name) === next) this.statusWrites.delete(name);
      });
    this.statusWrites.set(name, next);
  }

  private async writeStatus(name: string): Promise<void> {
    const policy = this.policies.get(name);
    if (!policy || policy.status?.observedGeneration === policy.metadata.generation) return;
    const warnings = typeCheck(policy, this.registry.list());
    const status = {
      ...{},
      ...policy.status,
      observedGeneration: policy.metadata.generation,
      typeChecking: warnings.length ? { expressionWarnings: warnings } : {},
    };
    await this.client.updateStatus(RESOURCES.validatingadmissionpolicies, { ...{}, ...policy, status });
  }

  private invalidate(): void {
    this.current = undefined;
  }

  private build(): PolicyHook[] {
    const byPolicy = new Map<string, ValidatingAdmissionPolicyBinding[]>();
    for (const binding of this.bindings.list()) {
      const name = binding.spec?.policyName;
      if (name) byPolicy.set(name, [...(byPolicy.get(name) ?? []), binding]);
    }
    const hooks: PolicyHook[] = [];
    const seen = new Set<string>();
    for (const policy of this.policies.list()) {
      const name = policy.metadata.name ?? '';
      seen.add(name);
      const bindings = byPolicy.get(name);
      if (!bindings) continue;
      const cached = this.compiled.get(name);
      // A status write changes the resourceVersion, not the generation: the expressions stay compiled.
      const sameSpec = cached && cached.policy.metadata.uid === policy.metadata.uid && cached.policy.metadata.generation === policy.metadata.generation;
      const compiled = cached && sameSpec ? cached : compilePolicy(policy);
      this.compiled.set(name, compiled);
      hooks.push({ compiled, bindings: bindings.sort(byName) });
    }
    for (const name of this.compiled.keys()) if (!seen.has(name)) this.compiled.delete(name);
    return hooks.sort((a, b) => byName(a.compiled.policy, b.compiled.policy));
  }
}

const byName = (a: KubeObject, b: KubeObject) =>
  (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : (a.metadata.name ?? '') > (b.metadata.name ?? '') ? 1 : 0;

interface ParamWatch {
  type: ResourceType;
  informer: SharedInformer;
}

/** Params of each paramKind in use, watched from the first request that needs them. */
export class ParamSource {
  private readonly watches = new Map<string, ParamWatch>();

  constructor(
    private readonly client: ApiClient,
    private readonly registry: ResourceRegistry,
    private readonly logger: Logger,
    private readonly signal: AbortSignal,
  ) {}

  private watchFor(apiVersion: string, kind: string): ParamWatch | undefined {
    const key = `${apiVersion}/${kind}`;
    const existing = this.watches.get(key);
    if (existing) return existing;
    const slash = apiVersion.lastIndexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    const definition = this.registry.list().find((d) => d.group === group && d.version === version && d.kind === kind) ?? this.registry.byKind(group, kind);
    if (!definition) return undefined;
    const type: ResourceType = { group, version: definition.version, resource: definition.resource, kind, namespaced: definition.namespaced };
    const informer = new SharedInformer(this.client, type, {}, { resyncMs: 0, logger: this.logger, retry: RETRY });
    void informer.run(this.signal);
    const watch = { type, informer };
    this.watches.set(key, watch);
    return watch;
  }

  /**
   * The params `binding` hands `policy` for a request in `namespace` (see DispatchContext.params). A param named
   * by `paramRef.name` that the watch has not seen yet is read from the store (`get`), so one created just
   * before the request is found.
   */
  async collect(
    policy: CompiledPolicy,
    binding: ValidatingAdmissionPolicyBinding,
    namespace: string,
    get: AdmissionRequest['get'],
  ): Promise<(KubeObject | null)[]> {
    const paramKind = policy.policy.spec?.paramKind;
    const ref = binding.spec?.paramRef;
    if (!paramKind || !ref) return [null];
    const kindName = `${paramKind.apiVersion ?? ''}, Kind=${paramKind.kind ?? ''}`;
    const watch = this.watchFor(paramKind.apiVersion ?? '', paramKind.kind ?? '');
    if (!watch) throw new Error(`paramKind kind \`${kindName}\` not known`);
    if (!watch.informer.hasSynced()) {
      const waited = new AbortController();
      const timer = setTimeout(() => waited.abort(), PARAM_SYNC_WAIT_MS);
      await watch.informer.waitForSync(AbortSignal.any([waited.signal, this.signal])).catch(() => undefined);
      clearTimeout(timer);
      if (!watch.informer.hasSynced()) throw new Error(`paramKind kind \`${kindName}\` not yet synced to use for admission`);
    }
    let paramNamespace = '';
    if (watch.type.namespaced) {
      paramNamespace = ref.namespace || namespace;
      if (!paramNamespace) throw new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    } else if (ref.namespace) {
      throw new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
    }
    let params: KubeObject[];
    if (ref.name) {
      const cached = watch.informer.get(paramNamespace ? `${paramNamespace}/${ref.name}` : ref.name);
      const param = cached ?? (await get({ group: watch.type.group, resource: watch.type.resource }, paramNamespace, ref.name));
      params = param ? [param] : [];
    } else {
      const selector = labelSelectorFromObject(ref.selector ?? {});
      params = watch.informer.list(watch.type.namespaced ? paramNamespace : undefined).filter((p) => selector.matches(p.metadata.labels));
    }
    if (params.length === 0 && ref.parameterNotFoundAction === 'Deny')
      throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
    return params;
  }
}
