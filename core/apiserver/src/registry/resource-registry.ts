import type { ResourceDefinition, ResourceRegistry } from '@skiff/kernel';
import { ApiServerError } from '../errors.js';

const IDENTIFIER = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * The kinds the API server serves, keyed by group and plural resource. A later registration of the same
 * group/resource replaces the earlier one, so a plugin can swap a built-in definition (its table columns,
 * its validation) without the API server knowing.
 */
export class ResourceRegistryImpl implements ResourceRegistry {
  private readonly byResource = new Map<string, ResourceDefinition>();
  private readonly byKindKey = new Map<string, ResourceDefinition>();
  /** Versions served from another version's storage (`conversion` set), by group/version/resource. */
  private readonly converted = new Map<string, ResourceDefinition>();
  private changes = 0;

  register(definition: ResourceDefinition): void {
    checkDefinition(definition);
    if (definition.conversion) {
      this.converted.set(`${definition.group}/${definition.version}/${definition.resource}`, definition);
      this.changes++;
      return;
    }
    const key = `${definition.group}/${definition.resource}`;
    const previous = this.byResource.get(key);
    if (previous) this.byKindKey.delete(`${previous.group}/${previous.kind}`);
    this.byResource.set(key, definition);
    this.byKindKey.set(`${definition.group}/${definition.kind}`, definition);
    this.changes++;
  }

  unregister(group: string, resource: string, version?: string): void {
    for (const [key, definition] of this.converted) {
      if (definition.group === group && definition.resource === resource && (version === undefined || definition.version === version))
        this.converted.delete(key);
    }
    const stored = this.byResource.get(`${group}/${resource}`);
    if (stored && (version === undefined || stored.version === version)) {
      this.byResource.delete(`${group}/${resource}`);
      this.byKindKey.delete(`${group}/${stored.kind}`);
    }
    this.changes++;
  }

  /** The stored version's definition of a resource. */
  get(group: string, resource: string): ResourceDefinition | undefined {
    return this.byResource.get(`${group}/${resource}`);
  }

  /** The definition serving one version of a resource: the stored one, or a converted one while its storage is served. */
  getVersion(group: string, version: string, resource: string): ResourceDefinition | undefined {
    const stored = this.byResource.get(`${group}/${resource}`);
    if (stored?.version === version) return stored;
    const converted = this.converted.get(`${group}/${version}/${resource}`);
    return converted && this.storageOf(converted) ? converted : undefined;
  }

  /** The stored definition a converted one is served from: its own group's, or the one its conversion names. */
  storageOf(converted: ResourceDefinition): ResourceDefinition | undefined {
    const storage = converted.conversion?.storage ?? converted;
    return this.byResource.get(`${storage.group}/${storage.resource}`);
  }

  byKind(group: string, kind: string): ResourceDefinition | undefined {
    return this.byKindKey.get(`${group}/${kind}`);
  }

  /** Every served definition, stored versions first. */
  list(): ResourceDefinition[] {
    return [...this.byResource.values(), ...[...this.converted.values()].filter((d) => this.byResource.get(`${d.group}/${d.resource}`)?.version !== d.version)];
  }

  /** Grows on every registration; documents derived from the registry (discovery, OpenAPI) cache by it. */
  get generation(): number {
    return this.changes;
  }
}

function checkDefinition(definition: ResourceDefinition): void {
  const name = `${definition.resource ?? '?'}.${definition.group ?? '?'}`;
  const fail = (detail: string) => {
    throw new ApiServerError('SKIFF_ERR_APISERVER_RESOURCE_INVALID', { resource: name, detail });
  };
  if (typeof definition.group !== 'string') fail('"group" must be a string ("" for the core group)');
  if (!IDENTIFIER.test(definition.resource ?? '')) fail('"resource" must be a lower-case plural name such as "pods"');
  if (!/^v\d+((alpha|beta)\d+)?$/.test(definition.version ?? '')) fail('"version" must look like v1, v1beta1 or v2alpha1');
  if (!definition.kind) fail('"kind" is required');
  if (typeof definition.namespaced !== 'boolean') fail('"namespaced" must be true or false');
}
