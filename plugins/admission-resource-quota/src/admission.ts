import { isApiError, type KubeObject, type Pod, type ResourceQuota } from '@skiff/api';
import { AdmissionError, type AdmissionRequest, type Logger } from '@skiff/kernel';
import { add, amountsOf, prettyPrint, toList, type Amounts } from './amounts.js';
import { missingResources } from './constraints.js';
import { NamespaceLocks } from './namespace-lock.js';
import { addObjectUsage, usedByStoredObjects, type CollectionLister } from './recount.js';
import { trackedKeys } from './scopes.js';
import { usageOf, type Collection } from './usage.js';

export interface QuotaAdmissionDeps {
  /** A namespace's stored objects of one collection (ResourceQuotas included), from one consistent read. */
  list: CollectionLister;
  /** Writes a quota's status, conditional on its resourceVersion (a 409 when it changed). */
  writeStatus(quota: ResourceQuota): Promise<ResourceQuota>;
  /** Whether a request was made by this plugin's own status writes. */
  isOwnWrite(request: AdmissionRequest): boolean;
  logger: Logger;
}

const QUOTAS: Collection = { group: '', resource: 'resourcequotas' };
const ATTEMPTS = 5;

/** An admitted write whose charge is recorded in the quotas' status but whose object may not be stored yet. */
interface Reservation {
  collection: Collection;
  name: string;
  /** For updates: the resourceVersion of the object the charge was added to. */
  baseVersion?: string;
  object: KubeObject;
  /** What it adds: its usage (a create) or the increase over the old object (an update). */
  delta: Amounts;
  /** What was added to each quota's status.used, by quota name. */
  charges: Map<string, Amounts>;
}

interface Waiting {
  request: AdmissionRequest;
  collection: Collection;
  object: KubeObject;
  delta: Amounts;
  settle(result: Reservation | AdmissionError): void;
}

/**
 * ResourceQuota admission. A create (or an update that grows usage) is charged to every quota of its
 * namespace that tracks it, by writing the quota's status.used — conditional on its resourceVersion — before
 * the object is stored, as kube-apiserver does. Charges in a namespace are made one batch at a time, and every
 * other write to its ResourceQuotas (the controller's recalculations, a user's spec changes) waits for its turn
 * and holds it until it is answered, so two requests never both take the last unit. A charge whose object was
 * not written after all (a later refusal, a name taken) is given back. Recalculations that reach the API
 * server are made exact here: objects stored plus admitted writes still in flight.
 */
export class QuotaAdmission {
  private readonly locks = new NamespaceLocks();
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly reservations = new Map<string, Set<Reservation>>();
  /** The turns held by quota writes of other writers, by request (shared by retries of one request) and namespace. */
  private readonly heldTurns = new WeakMap<object, Map<string, Promise<() => void>>>();

  constructor(private readonly deps: QuotaAdmissionDeps) {}

  /** Mutating tap for ResourceQuota writes by anyone but this plugin: their turn, and an exact status. */
  async quotaWrite(request: AdmissionRequest): Promise<void> {
    if (request.resource.group !== '' || request.resource.resource !== 'resourcequotas' || this.deps.isOwnWrite(request)) return;
    const namespace = request.namespace;
    // Retries of one request (an update rebuilt after a conflict) share its warnings list: they keep its turn.
    const identity = request.warnings ?? request;
    let turns = this.heldTurns.get(identity);
    if (!turns) this.heldTurns.set(identity, (turns = new Map()));
    let turn = turns.get(namespace);
    const holdUntilAnswered = Boolean(request.onFinished) && !request.dryRun;
    if (!turn) {
      turn = this.locks.acquire(namespace);
      turns.set(namespace, turn);
      if (holdUntilAnswered) request.onFinished!(() => void turn!.then((release) => release()));
    }
    try {
      await turn;
      const quota = request.object as ResourceQuota | undefined;
      if (!quota || request.operation === 'DELETE') return;
      if (request.operation === 'CREATE' && !request.subresource) await this.chargeQuotaCount(request, quota);
      const used = await this.exactUsage(quota, namespace);
      // A new quota is not stored yet, and counts itself.
      if (request.operation === 'CREATE') addObjectUsage(used, quota, QUOTAS, quota);
      const hard = Object.keys(quota.spec?.hard ?? {});
      // A status write keeps the hard limits it says (upstream's quota controller puts spec.hard back later); the
      // usage is always this plugin's exact count.
      const statusHard = request.subresource === 'status' && quota.status?.hard ? quota.status.hard : quota.spec?.hard;
      quota.status = { hard: { ...(statusHard ?? {}) }, used: toList(used, hard) };
    } finally {
      if (!holdUntilAnswered) {
        turns.delete(namespace);
        (await turn)();
      }
    }
  }

  /** A new ResourceQuota counts towards the quotas tracking `resourcequotas`; it holds the namespace's turn already. */
  private async chargeQuotaCount(request: AdmissionRequest, quota: ResourceQuota): Promise<void> {
    const item: Waiting = { request, collection: QUOTAS, object: quota, delta: usageOf(QUOTAS, quota), settle: () => undefined };
    const [result] = await this.tryCharge(request.namespace, [item]);
    if (result instanceof AdmissionError) throw result;
    if (result && result.charges.size > 0 && request.onFinished && !request.dryRun) this.releaseUnlessStored(request, result);
  }

  private releaseUnlessStored(request: AdmissionRequest, reservation: Reservation): void {
    request.onFinished!((outcome) => {
      const stored = outcome.object?.metadata?.name;
      if (outcome.succeeded && (stored === undefined || stored === reservation.name)) this.forget(request.namespace, reservation);
      else void this.release(request.namespace, reservation);
    });
  }

  /** Validating tap: refuses what would exceed a quota, charges the rest. */
  async admit(request: AdmissionRequest): Promise<void> {
    if (request.resource.resource === 'resourcequotas' && request.resource.group === '') return;
    // An in-place resize (pods/resize) can grow a pod's requests and limits: charged like an update.
    const resize = request.subresource === 'resize' && request.resource.group === '' && request.resource.resource === 'pods';
    if ((request.subresource && !resize) || !request.namespace || !request.object) return;
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return;
    const quotas = (await this.deps.list(QUOTAS, request.namespace)) as ResourceQuota[];
    if (quotas.length === 0) return;
    const collection: Collection = { group: request.resource.group, resource: request.resource.resource };
    const object = request.object;
    const delta = usageOf(collection, object);
    if (request.operation === 'UPDATE' && request.oldObject) {
      const before = usageOf(collection, request.oldObject);
      for (const [key, value] of [...delta]) {
        const increase = value - (before.get(key) ?? 0);
        if (increase > 0) delta.set(key, increase);
        else delta.delete(key);
      }
    }
    const tracked = quotas.map((quota) => ({ quota, keys: trackedKeys(quota, collection, object) }));
    if (collection.group === '' && collection.resource === 'pods' && request.operation === 'CREATE') {
      for (const { quota, keys } of tracked) {
        const missing = missingResources(object as Pod, keys);
        if (missing) throw forbidden(request, `failed quota: ${quota.metadata.name}: ${missing}`);
      }
    }
    if (tracked.every(({ keys }) => !keys.some((key) => delta.has(key)))) return;
    const result = await new Promise<Reservation | AdmissionError>((settle) => this.enqueue({ request, collection, object, delta, settle }));
    if (result instanceof AdmissionError) throw result;
    if (request.dryRun || !request.onFinished || result.charges.size === 0) return;
    this.releaseUnlessStored(request, result);
  }

  private enqueue(item: Waiting): void {
    const namespace = item.request.namespace;
    const queue = this.waiting.get(namespace);
    if (queue) {
      queue.push(item);
      return;
    }
    this.waiting.set(namespace, [item]);
    void this.locks.run(namespace, () => this.chargeBatch(namespace));
  }

  /** Takes every request waiting in the namespace and charges the ones that fit, in their order of arrival. */
  private async chargeBatch(namespace: string): Promise<void> {
    const batch = this.waiting.get(namespace) ?? [];
    this.waiting.delete(namespace);
    let lastError: unknown;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        const results = await this.tryCharge(namespace, batch);
        batch.forEach((item, i) => item.settle(results[i]!));
        return;
      } catch (err) {
        lastError = err;
        if (!isApiError(err, 'Conflict') && !isApiError(err, 'NotFound')) break;
      }
    }
    this.deps.logger.warn({ err: lastError, namespace }, 'charging resource quotas failed');
    const reason = lastError instanceof Error ? lastError.message : String(lastError);
    for (const item of batch) item.settle(new AdmissionError(`${subject(item.request)} is forbidden: failed to update quota status: ${reason}`, 409));
  }

  private async tryCharge(namespace: string, batch: Waiting[]): Promise<(Reservation | AdmissionError)[]> {
    const quotas = (await this.deps.list(QUOTAS, namespace)) as ResourceQuota[];
    const used = new Map<string, Amounts>();
    for (const quota of quotas) used.set(quota.metadata.name!, await this.currentUsage(quota, namespace));
    const changed = new Set<string>();
    const results = batch.map((item): Reservation | AdmissionError => {
      const charges = new Map<string, Amounts>();
      for (const quota of quotas) {
        const name = quota.metadata.name!;
        const keys = trackedKeys(quota, item.collection, item.object).filter((key) => item.delta.has(key));
        if (keys.length === 0) continue;
        const hard = amountsOf(quota.spec?.hard);
        const current = used.get(name)!;
        const exceeded = keys.filter((key) => (current.get(key) ?? 0) + item.delta.get(key)! > (hard.get(key) ?? Infinity));
        if (exceeded.length > 0)
          return forbidden(
            item.request,
            `exceeded quota: ${name}, requested: ${prettyPrint(item.delta, exceeded)}, used: ${prettyPrint(current, exceeded)}, limited: ${prettyPrint(hard, exceeded)}`,
          );
        charges.set(name, new Map(keys.map((key) => [key, item.delta.get(key)!])));
      }
      if (!item.request.dryRun)
        for (const [name, charge] of charges) {
          add(used.get(name)!, charge);
          changed.add(name);
        }
      return {
        collection: item.collection,
        name: item.object.metadata.name ?? '',
        baseVersion: item.request.operation === 'UPDATE' ? item.request.oldObject?.metadata.resourceVersion : undefined,
        object: item.object,
        delta: item.delta,
        charges,
      };
    });
    const written: ResourceQuota[] = [];
    try {
      for (const quota of quotas) {
        const name = quota.metadata.name!;
        if (!changed.has(name) && statusComplete(quota)) continue;
        written.push(await this.deps.writeStatus(withUsage(quota, used.get(name)!)));
      }
    } catch (err) {
      // Some quotas carry this batch's charges already: take them off before trying again.
      for (const stored of written) await this.subtract(stored, batch, results);
      throw err;
    }
    results.forEach((result, i) => {
      if (!(result instanceof AdmissionError) && !batch[i]!.request.dryRun && batch[i]!.request.onFinished && result.charges.size > 0)
        this.remember(namespace, result);
    });
    return results;
  }

  private async subtract(stored: ResourceQuota, batch: Waiting[], results: (Reservation | AdmissionError)[]): Promise<void> {
    const used = amountsOf(stored.status?.used);
    results.forEach((result, i) => {
      const charge = result instanceof AdmissionError || batch[i]!.request.dryRun ? undefined : result.charges.get(stored.metadata.name!);
      if (charge) add(used, charge, -1);
    });
    await this.deps.writeStatus(withUsage(stored, used));
  }

  /** status.used as stored, or counted afresh when it is missing a hard key (a new quota, a new key). */
  private async currentUsage(quota: ResourceQuota, namespace: string): Promise<Amounts> {
    if (statusComplete(quota)) return amountsOf(quota.status?.used);
    return this.exactUsage(quota, namespace);
  }

  /** What the stored objects use, plus the admitted writes not stored yet. Call during the namespace's turn. */
  private async exactUsage(quota: ResourceQuota, namespace: string): Promise<Amounts> {
    const { used, objects } = await usedByStoredObjects(quota, this.deps.list);
    for (const reservation of this.reservations.get(namespace) ?? []) {
      const stored = objects.get(`${reservation.collection.group}/${reservation.collection.resource}`);
      if (!stored) continue;
      const current = stored.find((object) => object.metadata.name === reservation.name);
      const pending = reservation.baseVersion === undefined ? !current : current?.metadata.resourceVersion === reservation.baseVersion;
      if (pending) addObjectUsage(used, quota, reservation.collection, reservation.object, reservation.delta);
    }
    return used;
  }

  private remember(namespace: string, reservation: Reservation): void {
    let set = this.reservations.get(namespace);
    if (!set) this.reservations.set(namespace, (set = new Set()));
    set.add(reservation);
  }

  private forget(namespace: string, reservation: Reservation): void {
    const set = this.reservations.get(namespace);
    set?.delete(reservation);
    if (set?.size === 0) this.reservations.delete(namespace);
  }

  /** Gives a charge back: its object was not written. */
  private async release(namespace: string, reservation: Reservation): Promise<void> {
    try {
      await this.locks.run(namespace, async () => {
        this.forget(namespace, reservation);
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          const quotas = (await this.deps.list(QUOTAS, namespace)) as ResourceQuota[];
          try {
            for (const quota of quotas) {
              const charge = reservation.charges.get(quota.metadata.name!);
              if (!charge) continue;
              const used = amountsOf(quota.status?.used);
              add(used, charge, -1);
              await this.deps.writeStatus(withUsage(quota, used));
              reservation.charges.delete(quota.metadata.name!);
            }
            return;
          } catch (err) {
            if (!isApiError(err, 'Conflict') && !isApiError(err, 'NotFound')) throw err;
          }
        }
      });
    } catch (err) {
      this.deps.logger.warn({ err, namespace, name: reservation.name }, 'giving back a quota charge failed; the quota controller will correct it');
    }
  }
}

function statusComplete(quota: ResourceQuota): boolean {
  const used = quota.status?.used ?? {};
  const hard = quota.status?.hard ?? {};
  const spec = quota.spec?.hard ?? {};
  return Object.keys(spec).every((key) => used[key] !== undefined && String(hard[key]) === String(spec[key]));
}

function withUsage(quota: ResourceQuota, used: Amounts): ResourceQuota {
  const hard = quota.spec?.hard ?? {};
  return { ...{}, ...quota, status: { hard: { ...hard }, used: toList(used, Object.keys(hard)) } };
}

function subject(request: AdmissionRequest): string {
  const resource = request.resource.group ? `${request.resource.resource}.${request.resource.group}` : request.resource.resource;
  return `${resource} "${request.name}"`;
}

function forbidden(request: AdmissionRequest, message: string): AdmissionError {
  return new AdmissionError(`${subject(request)} is forbidden: ${message}`);
}
