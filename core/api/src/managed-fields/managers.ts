// metadata.managedFields: who set which field. Every write records its manager — an Update entry with the
// fields the write changed (taken from the other managers), or for server-side apply an Apply entry with the
// fields the applied configuration names. Apply reports conflicts with other managers' fields whose values it
// would change (409, unless forced), and removes fields it applied before and no longer names, when no other
// manager holds them.
import { ApiError } from '../errors.js';
import type { ObjectSchema } from '../schemas/language.js';
import type { KubeObject, ManagedFieldsEntry, ObjectMeta, StatusCause } from '../types.js';
import { FieldSet, fieldSetOf, fieldsV1Of, formatFieldPath, removeAtPath, valueAtPath } from './field-set.js';

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

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function isLeaf(set: FieldSet, path: readonly string[]): boolean {
  let node: FieldSet | undefined = set;
  for (const element of path) node = node?.children.get(element);
  return node !== undefined && node.children.size === 0;
}

function entryKey(entry: ManagedFieldsEntry): string {
  return `${entry.manager ?? ''}\u0000${entry.operation ?? ''}\u0000${entry.subresource ?? ''}`;
}

interface Entry {
  entry: ManagedFieldsEntry;
  set: FieldSet;
  touched: boolean;
}

function load(entries: ManagedFieldsEntry[] | undefined): Entry[] {
  return (entries ?? []).map((entry) => ({ entry, set: FieldSet.fromJSON(entry.fieldsV1), touched: false }));
}

function store(entries: Entry[], write: ManagedWrite): ManagedFieldsEntry[] {
  return entries
    .filter(({ set }) => !set.empty)
    .map(({ entry, set, touched }) =>
      touched ? { ...entry, apiVersion: write.apiVersion, time: write.now, fieldsType: 'FieldsV1', fieldsV1: set.toJSON() } : entry,
    );
}

/**
 * The managed fields the stored object should carry, and whether the write set them itself. A write that sets
 * metadata.managedFields (kubectl moving client-side-apply ownership to server-side apply) has them taken as
 * given; an empty list clears them.
 */
function startingEntries(next: KubeObject, old: KubeObject | undefined): { entries: ManagedFieldsEntry[]; given: boolean } {
  const given = next.metadata.managedFields;
  if (given !== undefined && !sameValue(given, old?.metadata.managedFields)) return { entries: given, given: true };
  return { entries: old?.metadata.managedFields ?? [], given: false };
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
  const nextSet = fieldSetOf(write.schema, after);
  const before = scoped(old, write);
  // Values are compared at the leaves; a structural member (a list item held by its key) changes when it is new.
  const changed: string[][] = [];
  for (const path of nextSet.paths()) {
    const leaf = isLeaf(nextSet, path);
    if (leaf ? !sameValue(valueAtPath(after, path), valueAtPath(before, path)) : valueAtPath(before, path) === undefined) changed.push(path);
  }
  const removed = old
    ? fieldSetOf(write.schema, before)
        .paths()
        .filter((path) => !nextSet.has(path))
    : [];
  if (changed.length === 0 && removed.length === 0) {
    const kept = userSet ? starting : old?.metadata.managedFields;
    if (kept?.length) next.metadata.managedFields = kept;
    else delete next.metadata.managedFields;
    return;
  }
  const entries = load(starting);
  const mine = { manager, operation: 'Update' as const, ...(write.subresource ? { subresource: write.subresource } : {}) };
  let own = entries.find(({ entry }) => entryKey(entry) === entryKey(mine));
  if (!own) {
    own = { entry: { ...mine }, set: new FieldSet(), touched: true };
    entries.push(own);
  }
  // Ownership is per object: a field changed through any endpoint (the main resource, status, scale) leaves
  // whoever held it before.
  for (const item of entries) {
    const lost = item === own ? removed : [...removed, ...changed];
    for (const path of lost) {
      if (!item.set.has(path)) continue;
      item.set.remove(path);
      item.touched = true;
    }
  }
  for (const path of changed) own.set.add(path);
  own.touched = true;
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
  for (const conflict of conflicts) byManager.set(conflict.manager, [...(byManager.get(conflict.manager) ?? []), conflict]);
  const parts: string[] = [];
  for (const [manager, list] of byManager) {
    const using = list[0]!.apiVersion ? ` using ${list[0]!.apiVersion}` : '';
    if (conflicts.length === 1) parts.push(`conflict with "${manager}"${using}: ${formatFieldPath(list[0]!.path)}`);
    else parts.push(`conflicts with "${manager}"${using}:\n${list.map((c) => `- ${formatFieldPath(c.path)}`).join('\n')}`);
  }
  const count = conflicts.length === 1 ? '1 conflict' : `${conflicts.length} conflicts`;
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with "${c.manager}"${c.apiVersion ? ` using ${c.apiVersion}` : ''}`,
    field: formatFieldPath(c.path),
  }));
  return new ApiError('SKIFF_ERR_API_CONFLICT', `Apply failed with ${count}: ${parts.join('\n')}`, { kind, group, name, causes });
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
  const conflicts: (ApplyConflict & { owner: Entry })[] = [];
  for (const path of configSet.leafPaths()) {
    for (const owner of others) {
      if (!owner.set.has(path)) continue;
      if (sameValue(valueAtPath(configScoped, path), valueAtPath(liveScoped, path))) continue;
      conflicts.push({ manager: owner.entry.manager ?? '', apiVersion: owner.entry.apiVersion ?? '', path, owner });
    }
  }
  const allowed = allowedConflicts !== undefined && conflicts.every((conflict) => allowedConflicts.has(conflict.path));
  if (conflicts.length > 0 && !force && !allowed) {
    const refused = allowedConflicts ? conflicts.filter((conflict) => !allowedConflicts.has(conflict.path)) : conflicts;
    throw applyConflictError(refused, write.kind, write.group, write.name);
  }

  let own = entries.find(({ entry }) => entryKey(entry) === entryKey(mine));
  let result = live ? structuredClone(live) : undefined;
  if (result && own) {
    // Fields this manager applied before and leaves out now go, unless someone else holds them too.
    const dropped = own.set.paths().filter((path) => !configSet.has(path) && !others.some((other) => other.set.has(path)));
    for (const path of dropped.sort((a, b) => b.length - a.length)) removeAtPath(result, path);
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
    own.set.children.clear();
    for (const path of configSet.paths()) own.set.add(path);
    own.touched = true;
  }
  const stored = store(entries, write);
  if (stored.length > 0) result.metadata.managedFields = stored;
  else delete result.metadata.managedFields;
  return result;
}
