import { ApiError, isApiError, qualifiedResource, type KubeObject } from '@skiff/api';
import { generateNameSuffix } from './metadata.js';

/** How many names Kubernetes (1.32 and later) generates for one create before it gives up with a 409. */
export const GENERATE_NAME_ATTEMPTS = 8;

// Kubernetes' generated names fit a DNS label: the prefix is cut so that prefix and suffix stay within 63.
const MAX_GENERATED_PREFIX = 63 - 5;

/** `metadata.generateName` plus a random suffix, the prefix cut to 58 characters as Kubernetes does. */
export function generatedName(prefix: string, suffix = generateNameSuffix()): string {
  return `${prefix.slice(0, MAX_GENERATED_PREFIX)}${suffix}`;
}

/**
 * Creates an object whose name the server generates from `metadata.generateName`, trying a fresh name when
 * the one it picked is taken: each attempt gets a copy of the object as it came (admission and the store
 * see it anew), up to GENERATE_NAME_ATTEMPTS. The last collision is a 409 AlreadyExists that says the server
 * could not find a free name, with a retry hint. `suffixes` picks each attempt's suffix.
 */
export async function createWithGeneratedName<T>(
  object: KubeObject,
  resource: { resource: string; group: string },
  create: (candidate: KubeObject) => Promise<T>,
  suffixes: () => string = generateNameSuffix,
): Promise<T> {
  const prefix = object.metadata.generateName!;
  const pristine = structuredClone(object);
  for (let attempt = 1; ; attempt++) {
    const candidate = attempt === 1 ? object : structuredClone(pristine);
    const name = generatedName(prefix, suffixes());
    candidate.metadata.name = name;
    try {
      return await create(candidate);
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
      if (attempt >= GENERATE_NAME_ATTEMPTS) throw generateNameConflict(resource, name);
    }
  }
}

function generateNameConflict({ resource, group }: { resource: string; group: string }, name: string): ApiError {
  return new ApiError(
    'SKIFF_ERR_API_ALREADY_EXISTS',
    `${qualifiedResource(resource, group)} "${name}" already exists, the server was not able to generate a unique name for the object`,
    { name, ...(group ? { group } : {}), kind: resource, retryAfterSeconds: 1 },
  );
}
