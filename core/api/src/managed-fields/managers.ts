// metadata.managedFields: who set which field. Every write records its manager — an Update entry with the
// fields the write changed (taken from the other managers), or for server-side apply an Apply entry with the
// fields the applied configuration names. Apply reports conflicts with other managers' fields whose values it
// would change (409, unless forced), and removes fields it applied before and no longer names, when no other
// manager holds them.
//
// Budgets: entries a client sends that Kubernetes could not decode are ignored (the stored ones are kept), and
// like Kubernetes at most MAX_UPDATE_MANAGERS Update entries are kept, the oldest merged into an
// `ancient-changes` entry per API version. Work between entries goes through field-set operations that walk
// only the paths two sets share, so many managers, or managers of many fields, cost what they hold.
import { ApiError } from '../errors.js';
import { isJsonObject } from '../guards.js';
import type { ObjectSchema } from '../schemas/language.js';
import type { KubeObject, ManagedFieldsEntry, ObjectMeta, StatusCause } from '../types.js';
import { FieldSet, fieldChangesOf, fieldSetOf, fieldsV1Of, FieldValues, formatFieldPath, removeFieldPaths, sameJson } from './field-set.js';

/** Update entries an object keeps (Kubernetes' DefaultMaxUpdateManagers); older ones are merged. */
const MAX_UPDATE_MANAGERS = 10;

/** The manager the merged oldest Update entries are recorded under, as in Kubernetes. */
const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/** The kind and write the managed fields are recorded for. */
export interface ManagedWrite {
  schema?: ObjectSchema;
  /** `apps/v1`. */
  apiVersion: string;
  /** '' for the main resource, `status`, `scale`… */
  subresource: string;
  /** The kind has a status subresource: main-resource writes do not count status, status writes count nothing else. */
  hasStatus: boolean;
  /** RFC 3339 time of the write. */
  now: string;
}

// ObjectMeta fields a manager can own; the rest is the server's (name, uid, resourceVersion…).
const OWNED_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const satisfies readonly (keyof ObjectMeta)[];

/** The part of an object a write to `subresource` is about: the fields its managers can own. */
function scoped(object: KubeObject | undefined, write: ManagedWrite): Record<string, unknown> {
  if (!object) return {};
  const out: Record<string, unknown> = {};
  const metadata: Record<string, unknown> = {};
  for (const key of OWNED_METADATA) {
    const value = object.metadata?.[key];
    if (value !== undefined && value !== null) metadata[key] = value;
  }
  if (Object.keys(metadata).length > 0) out.metadata = metadata;
  for (const [key, value] of Object.entries(object)) {
    if (key === 'metadata' || key === 'apiVersion' || key === 'kind') continue;
    if (write.hasStatus && (write.subresource === 'status') !== (key === 'status')) continue;
    out[key] = value;
  }
  return out;
}

function entryKey(entry: ManagedFieldsEntry): string {
  return `${entry.manager ?? ''}\u0000${entry.operation ?? ''}\u0000${entry.subresource ?? ''}`;
}

interface Entry {
  entry: ManagedFieldsEntry;
  set: FieldSet;
  /** The set changed: its fieldsV1 is written again. */
  touched: boolean;
  /** Merged into by the cap on Update entries: keeps its own apiVersion and time. */
  merged?: boolean;
}

function load(entries: ManagedFieldsEntry[] | undefined): Entry[] {
  return (entries ?? []).map((entry) => ({ entry, set: FieldSet.fromJSON(entry.fieldsV1), touched: false }));
}

function store(entries: Entry[], write: ManagedWrite): ManagedFieldsEntry[] {
  return entries
    .filter(({ set }) => !set.empty)
    .map(({ entry, set, touched, merged }) => {
      if (!touched) return entry;
      const stamp = merged ? {} : { apiVersion: write.apiVersion, time: write.now };
      return { ...{}, ...entry, ...stamp, fieldsType: 'FieldsV1', fieldsV1: set.toJSON() };
    });
}

/**
 * Whether Kubernetes could decode these entries: each an object with operation `Apply` or `Update`, an
 * apiVersion, fieldsType `FieldsV1` and, if any, an object of fields.
 */
function decodable(entries: unknown): entries is ManagedFieldsEntry[] {
  if (!Array.isArray(entries)) return false;
  return entries.every(
    (entry) =>
      isJsonObject(entry) &&
      (entry.operation === 'Apply' || entry.operation === 'Update') &&
      typeof entry.apiVersion === 'string' &&
      entry.apiVersion !== '' &&
      entry.fieldsType === 'FieldsV1' &&
      (entry.fieldsV1 === undefined || isJsonObject(entry.fieldsV1)) &&
      (entry.manager === undefined || typeof entry.manager === 'string') &&
      (entry.subresource === undefined || typeof entry.subresource === 'string') &&
      (entry.time === undefined || typeof entry.time === 'string'),
  );
}

/**
 * The managed fields the stored object should carry, and whether the write set them itself. A write that sets
 * metadata.managedFields (kubectl moving client-side-apply ownership to server-side apply) has them taken as
 * given; an empty list clears them. Entries that do not decode are ignored, as Kubernetes ignores them: the
 * stored ones stay.
 */
function startingEntries(next: KubeObject, old: KubeObject | undefined): { entries: ManagedFieldsEntry[]; given: boolean } {
  const given: unknown = next.metadata.managedFields;
  if (given !== undefined && decodable(given) && !sameJson(given, old?.metadata.managedFields)) return { entries: given, given: true };
  return { entries: old?.metadata.managedFields ?? [], given: false };
}

function timeOf(entry: ManagedFieldsEntry): number {
  const time = entry.time === undefined ? Number.NaN : Date.parse(entry.time);
  return Number.isNaN(time) ? 0 : Math.floor(time / 1000);
}

/**
 * Keeps at most `max` Update entries, as Kubernetes does: oldest first (by time in seconds, then by identity),
 * the entries of each API version after the first are merged into one `ancient-changes` entry of that version.
 * Apply entries are never merged. Returns the entries kept.
 */
function capUpdateManagers(entries: Entry[], max = MAX_UPDATE_MANAGERS): Entry[] {
  const updaters = entries.filter(({ entry }) => entry.operation !== 'Apply');
  if (updaters.length <= max) return entries;
  const identity = (item: Entry) => `${entryKey(item.entry)}\u0000${item.entry.apiVersion ?? ''}`;
  updaters.sort((a, b) => timeOf(a.entry) - timeOf(b.entry) || (identity(a) < identity(b) ? -1 : identity(a) > identity(b) ? 1 : 0));
  const firstOfVersion = new Map<string, Entry>();
  const buckets = new Map<string, Entry>();
  const gone = new Set<Entry>();
  let count = updaters.length;
  for (const item of updaters) {
    if (count <= max) break;
    const version = item.entry.apiVersion ?? '';
    const first = firstOfVersion.get(version);
    if (!first) {
      firstOfVersion.set(version, item);
      continue;
    }
    let bucket = buckets.get(version);
    if (!bucket) {
      // The first entry of the version becomes the bucket, in its place.
      bucket = first;
      bucket.entry = { manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: version, ...(bucket.entry.time ? { time: bucket.entry.time } : {}) };
      bucket.touched = true;
      bucket.merged = true;
      buckets.set(version, bucket);
    }
    bucket.set.addAll(item.set);
    // The merged entry is more recent than the bucket.
    if (item.entry.time !== undefined) bucket.entry = { ...{}, ...bucket.entry, time: item.entry.time };
    gone.add(item);
    count--;
  }
  return entries.filter((item) => !gone.has(item));
}

/** Records a create, update or non-apply patch by `manager` in `next.metadata.managedFields`. */
export function recordUpdate(next: KubeObject, old: KubeObject | undefined, manager: string, write: ManagedWrite): void {
  const { entries: starting, given: userSet } = startingEntries(next, old);
  const after = scoped(next, write);
  // A create owns every field it sets: nothing to compare against.
  if (!old && !userSet) {
    const fieldsV1 = fieldsV1Of(write.schema, after);
    if (Object.keys(fieldsV1).length === 0) delete next.metadata.managedFields;
    else
      next.metadata.managedFields = [
        {
          manager,
          operation: 'Update',
          apiVersion: write.apiVersion,
          time: write.now,
          fieldsType: 'FieldsV1',
          fieldsV1,
          ...(write.subresource ? { subresource: write.subresource } : {}),
        },
      ];
    return;
  }
  const before = scoped(old, write);
  const { set: nextSet, changed } = fieldChangesOf(write.schema, after, before);
  const removed = old ? fieldSetOf(write.schema, before).difference(nextSet) : new FieldSet();
  if (changed.empty && removed.empty) {
    const kept = userSet ? store(capUpdateManagers(load(starting)), write) : old?.metadata.managedFields;
    if (kept?.length) next.metadata.managedFields = kept;
    else delete next.metadata.managedFields;
    return;
  }
  let entries = load(starting);
  const mine = { manager, operation: 'Update' as const, ...(write.subresource ? { subresource: write.subresource } : {}) };
  let own = entries.find(({ entry }) => entryKey(entry) === entryKey(mine));
  if (!own) {
    own = { entry: { ...mine }, set: new FieldSet(), touched: true };
    entries.push(own);
  }
  // Ownership is per object: a field changed through any endpoint (the main resource, status, scale) leaves
  // whoever held it before.
  for (const item of entries) {
    const lostRemoved = item.set.removeAll(removed);
    const lostChanged = item !== own && item.set.removeAll(changed);
    if (lostRemoved || lostChanged) item.touched = true;
  }
  // `changed` is not used after this, so a manager new to the object can take it as its set.
  if (own.set.empty) own.set = changed;
  else own.set.addAll(changed);
  own.touched = true;
  entries = capUpdateManagers(entries);
  const stored = store(entries, write);
  if (stored.length > 0) next.metadata.managedFields = stored;
  else delete next.metadata.managedFields;
}

export interface ApplyConflict {
  manager: string;
  apiVersion: string;
  path: string[];
}

/** The 409 kubectl prints for apply conflicts, with a FieldManagerConflict cause per field. */
export function applyConflictError(conflicts: ApplyConflict[], kind: string, group: string, name: string): ApiError {
  const byManager = new Map<string, ApplyConflict[]>();
  for (const conflict of conflicts) {
    const list = byManager.get(conflict.manager);
    if (list) list.push(conflict);
    else byManager.set(conflict.manager, [conflict]);
  }
  const fields = new Map(conflicts.map((conflict) => [conflict, formatFieldPath(conflict.path)]));
  const parts: string[] = [];
  for (const [manager, list] of byManager) {
    const using = list[0]!.apiVersion ? ` using ${list[0]!.apiVersion}` : '';
    if (conflicts.length === 1) parts.push(`conflict with "${manager}"${using}: ${fields.get(list[0]!)}`);
    else parts.push(`conflicts with "${manager}"${using}:\n${list.map((c) => `- ${fields.get(c)}`).join('\n')}`);
  }
  const count = conflicts.length === 1 ? '1 conflict' : `${conflicts.length} conflicts`;
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with "${c.manager}"${c.apiVersion ? ` using ${c.apiVersion}` : ''}`,
    field: fields.get(c)!,
  }));
  return new ApiError('SKIFF_ERR_API_CONFLICT', `Apply failed with ${count}: ${parts.join('\n')}`, { kind, group, name, causes });
}

type Conflict = ApplyConflict & { owner: Entry };

/**
 * The fields the configuration sets to a new value that other managers hold, in the configuration's field
 * order, then by manager. Each owner's set is walked only where it meets the configuration's (the smaller of
 * two nodes' children drives), with both objects' values read alongside.
 */
function conflictsOf(configSet: FieldSet, others: readonly Entry[], config: unknown, live: unknown): Conflict[] {
  const configValues = new FieldValues();
  const liveValues = new FieldValues();
  const conflicts: Conflict[] = [];
  const path: string[] = [];
  for (const owner of others) {
    const visit = (mine: FieldSet, theirs: FieldSet, applied: unknown, current: unknown): void => {
      if (mine.own && mine.children.size === 0 && theirs.own && !sameJson(applied, current)) {
        conflicts.push({ manager: owner.entry.manager ?? '', apiVersion: owner.entry.apiVersion ?? '', path: [...path], owner });
      }
      const few = mine.children.size <= theirs.children.size ? mine.children : theirs.children;
      for (const element of few.keys()) {
        const next = mine.children.get(element);
        const held = theirs.children.get(element);
        if (!next || !held) continue;
        path.push(element);
        visit(next, held, configValues.child(applied, element), liveValues.child(current, element));
        path.pop();
      }
    };
    visit(configSet, owner.set, config, live);
  }
  if (conflicts.length > 1) sortInSetOrder(conflicts, configSet);
  return conflicts;
}

/** Sorts conflicts by their paths' order in `set` (depth first, members in insertion order); stable. */
function sortInSetOrder(conflicts: Conflict[], set: FieldSet): void {
  // Each node's children numbered once, only for nodes on some conflict's path.
  const positions = new Map<FieldSet, Map<string, number>>();
  const rankOf = (path: readonly string[]): number[] => {
    const rank: number[] = [];
    let node: FieldSet | undefined = set;
    for (const element of path) {
      if (!node) break;
      let order = positions.get(node);
      if (!order) {
        order = new Map();
        for (const key of node.children.keys()) order.set(key, order.size);
        positions.set(node, order);
      }
      rank.push(order.get(element) ?? 0);
      node = node.children.get(element);
    }
    return rank;
  };
  const ranks = new Map(conflicts.map((conflict) => [conflict, rankOf(conflict.path)]));
  conflicts.sort((a, b) => {
    const left = ranks.get(a)!;
    const right = ranks.get(b)!;
    for (let i = 0; i < Math.min(left.length, right.length); i++) if (left[i] !== right[i]) return left[i]! - right[i]!;
    return left.length - right.length;
  });
}

/**
 * Server-side apply of `config` by `manager` to `live` (undefined: the object is being created). `merge`
 * lays the configuration over the live object (a strategic merge by the kind's list keys). Returns the new
 * object with its managed fields; throws a 409 on conflicts unless `force`.
 */
export function applyWithManagedFields(
  live: KubeObject | undefined,
  config: KubeObject,
  manager: string,
  force: boolean,
  write: ManagedWrite & { kind: string; group: string; name: string },
  merge: (live: KubeObject | undefined, config: KubeObject) => KubeObject,
  /** Conflicting fields the apply may take over anyway (kubectl's client-side apply upgrade: the last-applied fields). */
  allowedConflicts?: FieldSet,
): KubeObject {
  const entries = load(live?.metadata.managedFields);
  const configScoped = scoped(config, write);
  const liveScoped = scoped(live, write);
  const configSet = fieldSetOf(write.schema, configScoped);
  const mine = { manager, operation: 'Apply' as const, ...(write.subresource ? { subresource: write.subresource } : {}) };
  const others = entries.filter(({ entry }) => entryKey(entry) !== entryKey(mine));
  const conflicts = conflictsOf(configSet, others, configScoped, liveScoped);
  const allowed = allowedConflicts !== undefined && conflicts.every((conflict) => allowedConflicts.has(conflict.path));
  if (conflicts.length > 0 && !force && !allowed) {
    const refused = allowedConflicts ? conflicts.filter((conflict) => !allowedConflicts.has(conflict.path)) : conflicts;
    throw applyConflictError(refused, write.kind, write.group, write.name);
  }

  let own = entries.find(({ entry }) => entryKey(entry) === entryKey(mine));
  let result = live ? structuredClone(live) : undefined;
  if (result && own) {
    // Fields this manager applied before and leaves out now go, unless someone else holds them too.
    const dropped = own.set.difference(configSet);
    for (const other of others) dropped.removeAll(other.set);
    removeFieldPaths(result, dropped);
  }
  result = merge(result, config);
  for (const conflict of conflicts) {
    conflict.owner.set.remove(conflict.path);
    conflict.owner.touched = true;
  }
  if (!own) {
    own = { entry: { ...mine }, set: configSet, touched: true };
    entries.push(own);
  } else {
    own.set = configSet;
    own.touched = true;
  }
  const stored = store(entries, write);
  if (stored.length > 0) result.metadata.managedFields = stored;
  else delete result.metadata.managedFields;
  return result;
}
