import { apiVersionOf, type KubeObject, type ManagedFieldsEntry } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { timestamp } from './metadata.js';

// Metadata that no field manager owns (the server sets it).
const SERVER_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generateName',
]);
// The keys Kubernetes uses to identify list items in field sets (containers by name, ports by containerPort…).
const ITEM_KEYS = ['name', 'containerPort', 'mountPath', 'devicePath', 'ip', 'type', 'key', 'port'];

/**
 * Records that `manager` applied `applied` (a server-side apply): replaces its Apply entry in
 * `metadata.managedFields` with the set of fields the applied configuration names, in the FieldsV1 form
 * (`f:spec` → `f:replicas`, list items as `k:{"name":"web"}`, scalar list members as `v:"x"`).
 */
export function recordApply(object: KubeObject, applied: KubeObject, manager: string, definition: ResourceDefinition, subresource: string): void {
  const entry: ManagedFieldsEntry = {
    manager,
    operation: 'Apply',
    apiVersion: apiVersionOf(definition),
    time: timestamp(),
    fieldsType: 'FieldsV1',
    fieldsV1: fieldSet(applied, true),
    ...(subresource ? { subresource } : {}),
  };
  const others = (object.metadata.managedFields ?? []).filter(
    (existing) => !(existing.manager === manager && existing.operation === 'Apply' && (existing.subresource ?? '') === subresource),
  );
  object.metadata.managedFields = [...others, entry];
}

function fieldSet(value: Record<string, unknown>, topLevel: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (topLevel && (key === 'apiVersion' || key === 'kind')) continue;
    if (topLevel && key === 'metadata') {
      const metadata = metadataFieldSet(child);
      if (Object.keys(metadata).length > 0) out['f:metadata'] = metadata;
      continue;
    }
    out[`f:${key}`] = childSet(child);
  }
  return out;
}

function metadataFieldSet(metadata: unknown): Record<string, unknown> {
  if (!isRecord(metadata)) return {};
  const owned: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) if (!SERVER_METADATA.has(key)) owned[key] = value;
  return fieldSet(owned, false);
}

function childSet(value: unknown): Record<string, unknown> {
  if (isRecord(value)) return fieldSet(value, false);
  if (!Array.isArray(value)) return {};
  const out: Record<string, unknown> = {};
  for (const item of value) {
    if (isRecord(item)) {
      const keyField = ITEM_KEYS.find((candidate) => item[candidate] !== undefined);
      if (keyField === undefined) continue;
      out[`k:${JSON.stringify({ [keyField]: item[keyField] })}`] = { '.': {}, ...fieldSet(item, false) };
    } else {
      out[`v:${JSON.stringify(item)}`] = {};
    }
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
