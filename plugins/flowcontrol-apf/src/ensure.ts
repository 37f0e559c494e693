import { isApiError, type FlowSchema, type PriorityLevelConfiguration, type ResourceType } from '@skiff/api';
import type { ApiClient, Logger } from '@skiff/kernel';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from './bootstrap.js';
import { AUTO_UPDATE_ANNOTATION, FLOW_SCHEMAS, PRIORITY_LEVELS } from './names.js';

type ConfigObject = FlowSchema | PriorityLevelConfiguration;

/** What one pass of the ensurer wrote. */
export interface EnsureReport {
  created: string[];
  updated: string[];
}

/** Names of the mandatory objects, `<resource>/<name>`: a change to one of them calls for a pass at once. */
export const MANDATORY_NAMES: ReadonlySet<string> = new Set([
  ...MANDATORY_PRIORITY_LEVELS.map((level) => `${PRIORITY_LEVELS.resource}/${level.metadata.name}`),
  ...MANDATORY_FLOW_SCHEMAS.map((schema) => `${FLOW_SCHEMAS.resource}/${schema.metadata.name}`),
]);

/**
 * One pass over the bootstrap configuration, as kube-apiserver maintains it: a missing object is created; a
 * mandatory one gets its spec back whatever was done to it; a suggested one is kept as bootstrapped while its
 * `apf.kubernetes.io/autoupdate-spec` annotation is "true" — and, without the annotation, while it was never
 * changed (generation 1), the annotation then written down either way. Priority levels go first, so the flow
 * schemas never reference a missing one.
 */
export async function ensureConfiguration(client: ApiClient, logger: Logger): Promise<EnsureReport> {
  const report: EnsureReport = { created: [], updated: [] };
  const passes: [ResourceType, readonly ConfigObject[], boolean][] = [
    [PRIORITY_LEVELS, MANDATORY_PRIORITY_LEVELS, true],
    [PRIORITY_LEVELS, SUGGESTED_PRIORITY_LEVELS, false],
    [FLOW_SCHEMAS, MANDATORY_FLOW_SCHEMAS, true],
    [FLOW_SCHEMAS, SUGGESTED_FLOW_SCHEMAS, false],
  ];
  for (const [type, objects, mandatory] of passes) {
    for (const desired of objects) {
      const name = `${type.resource}/${desired.metadata.name}`;
      try {
        const outcome = await ensureOne(client, type, desired, mandatory);
        if (outcome) report[outcome].push(name);
      } catch (err) {
        // A write that lost a race (409) or failed is tried again on the next pass.
        logger.warn({ err, object: name }, 'could not ensure an API Priority and Fairness bootstrap object');
      }
    }
  }
  return report;
}

async function ensureOne<T extends ConfigObject>(
  client: ApiClient,
  type: ResourceType,
  desired: T,
  mandatory: boolean,
): Promise<'created' | 'updated' | undefined> {
  const existing = await getOrUndefined<T>(client, type, desired.metadata.name!);
  if (!existing) {
    try {
      await client.create(type, structuredClone(desired));
      return 'created';
    } catch (err) {
      if (isApiError(err, 'AlreadyExists')) return undefined;
      throw err;
    }
  }
  const annotation = existing.metadata.annotations?.[AUTO_UPDATE_ANNOTATION];
  const autoUpdate = mandatory || (annotation === undefined ? existing.metadata.generation === 1 : annotation === 'true');
  const wantAnnotation = String(autoUpdate);
  const specDiffers = autoUpdate && !sameSpec(existing.spec, desired.spec);
  if (!specDiffers && annotation === wantAnnotation) return undefined;
  const updated: T = {
    ...{},
    ...existing,
    metadata: { ...{}, ...existing.metadata, annotations: { ...{}, ...existing.metadata.annotations, [AUTO_UPDATE_ANNOTATION]: wantAnnotation } },
    spec: specDiffers ? structuredClone(desired.spec) : existing.spec,
  };
  await client.update(type, updated);
  return 'updated';
}

async function getOrUndefined<T extends ConfigObject>(client: ApiClient, type: ResourceType, name: string): Promise<T | undefined> {
  try {
    return await client.get<T>(type, name);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

/** Specs compared as the API stores them: defaults filled in, `clusterScope: false` the same as none. */
export function sameSpec(stored: unknown, desired: unknown): boolean {
  return canonical(stored) === canonical(desired);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (key, member: unknown) => {
    if (key === 'clusterScope' && member === false) return undefined;
    if (member && typeof member === 'object' && !Array.isArray(member)) {
      return Object.fromEntries(Object.entries(member).sort(([a], [b]) => a.localeCompare(b)));
    }
    return member;
  });
}
