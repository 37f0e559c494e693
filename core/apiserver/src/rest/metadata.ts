import { randomInt, randomUUID } from 'node:crypto';
import { errors, type KubeObject, type StatusCause } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';

let lastSecond = -1;
let lastText = '';

/** RFC 3339 with whole seconds, as Kubernetes writes timestamps. */
export function timestamp(ms = Date.now()): string {
  const second = Math.floor(ms / 1000);
  // Every write asks; within one second the answer is the same.
  if (second !== lastSecond) {
    lastSecond = second;
    lastText = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
  }
  return lastText;
}

// Kubernetes's alphabet for generated names: no vowels (no accidental words), no look-alike characters.
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function generateNameSuffix(length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return out;
}

/** Names become URL path segments and storage key parts: they must not contain "/" or "%" or be "." or "..". */
export function pathSegmentNameCauses(name: string, field: string): StatusCause[] {
  if (name === '.' || name === '..') return [{ type: 'FieldValueInvalid', field, message: `Invalid value: "${name}": may not be '${name}'` }];
  for (const bad of ['/', '%']) {
    if (name.includes(bad)) return [{ type: 'FieldValueInvalid', field, message: `Invalid value: "${name}": may not contain '${bad}'` }];
  }
  return [];
}

/**
 * Fills in what the server owns on create: namespace (from the path), uid, creationTimestamp and, for kinds
 * that keep one, generation;
 * drops what a client may not set. A name from generateName is picked before (see generate-name.ts).
 */
export function prepareCreateMetadata(object: KubeObject, definition: ResourceDefinition, pathNamespace: string): void {
  const metadata = object.metadata;
  if (definition.namespaced) {
    if (metadata.namespace && metadata.namespace !== pathNamespace)
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    metadata.namespace = pathNamespace;
  } else {
    delete metadata.namespace;
  }
  if (!metadata.name)
    throw errors.invalid(definition.kind, definition.group, '', [
      { type: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' },
    ]);
  const causes = pathSegmentNameCauses(metadata.name, 'metadata.name');
  if (causes.length > 0) throw errors.invalid(definition.kind, definition.group, metadata.name, causes);
  metadata.uid = randomUUID();
  metadata.creationTimestamp = timestamp();
  if (definition.generation !== false) metadata.generation = 1;
  delete metadata.resourceVersion;
  delete metadata.deletionTimestamp;
  delete metadata.deletionGracePeriodSeconds;
}
