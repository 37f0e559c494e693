// The ConversionReview exchange: the request kube-apiserver sends (the first of the CRD's conversionReviewVersions
// it speaks), and the checks it makes of the answer before trusting the converted objects.
import { isJsonObject, type KubeObject, type StatusCause } from '@skiff/api';
import { validateAnnotations, validateLabels } from '@skiff/api/validation';

const REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type ReviewVersion = (typeof REVIEW_VERSIONS)[number];

/** The review version to send: the first one listed that is spoken here. */
export function reviewVersionOf(listed: readonly string[]): ReviewVersion {
  const version = listed.find((v): v is ReviewVersion => (REVIEW_VERSIONS as readonly string[]).includes(v));
  if (!version) throw new Error('no supported conversion review versions');
  return version;
}

export function reviewRequest(version: ReviewVersion, uid: string, desiredAPIVersion: string, objects: KubeObject[]): unknown {
  return { apiVersion: `apiextensions.k8s.io/${version}`, kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects } };
}

/** The converted objects of an answer, or an Error with kube-apiserver's words for what is wrong with it. */
export function convertedObjects(version: ReviewVersion, uid: string, answer: unknown): unknown[] {
  if (!isJsonObject(answer)) throw new Error('no response provided');
  // v1beta1 answers were never held to their type and uid.
  if (version === 'v1') {
    const got = `${typeof answer.apiVersion === 'string' ? answer.apiVersion : ''}, Kind=${typeof answer.kind === 'string' ? answer.kind : ''}`;
    if (got !== 'apiextensions.k8s.io/v1, Kind=ConversionReview')
      throw new Error(`expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${got.startsWith('/') ? got.slice(1) : got}`);
  }
  const response = answer.response;
  if (!isJsonObject(response)) throw new Error('no response provided');
  if (version === 'v1' && response.uid !== uid)
    throw new Error(`expected response.uid="${uid}", got "${typeof response.uid === 'string' ? response.uid : ''}"`);
  const result = isJsonObject(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message) throw new Error(result.message);
    throw new Error(`response.result.status was '${typeof result.status === 'string' ? result.status : ''}', not 'Success'`);
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

/** A converted object must be the same object: kind, name, namespace and uid unchanged. */
export function checkSameObject(original: KubeObject, converted: KubeObject): void {
  const pairs: [string, unknown, unknown][] = [
    ['kind', original.kind, converted.kind],
    ['name', original.metadata?.name, converted.metadata?.name],
    ['namespace', original.metadata?.namespace, converted.metadata?.namespace],
    ['UID', original.metadata?.uid, converted.metadata?.uid],
  ];
  for (const [what, expected, got] of pairs) {
    if ((expected ?? '') !== (got ?? '')) throw new Error(`must have the same ${what}: ${String(expected ?? '')} != ${String(got ?? '')}`);
  }
}

/**
 * The converted object with the original's metadata: a webhook may change labels and annotations (held to the
 * usual rules), nothing else of metadata.
 */
export function restoreMetadata(original: KubeObject, converted: Record<string, unknown>): KubeObject {
  const answered = converted.metadata;
  if (answered === undefined) throw new Error('missing metadata in converted object');
  if (!isJsonObject(answered)) throw new Error(`invalid metadata of type ${goType(answered)} in converted object`);
  const metadata: Record<string, unknown> = { ...structuredClone(original.metadata ?? {}) };
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete metadata[field];
      continue;
    }
    if (!isJsonObject(value)) throw new Error(`invalid metadata.${field} of type ${goType(value)} in converted object`);
    for (const [key, entry] of Object.entries(value)) {
      if (typeof entry !== 'string') throw new Error(`metadata.${field}[${key}] must be a string, but is ${goType(entry)} in converted object`);
    }
    const strings = value as Record<string, string>;
    const causes: StatusCause[] = field === 'labels' ? validateLabels(strings, 'metadata.labels') : validateAnnotations(strings, 'metadata.annotation');
    if (causes.length) throw new Error(causes.map((c) => `${c.field}: ${c.message}`).join(', '));
    metadata[field] = strings;
  }
  return { ...{}, ...converted, metadata } as KubeObject;
}

function goType(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  if (Array.isArray(value)) return '[]interface {}';
  return value === null ? '<nil>' : 'map[string]interface {}';
}
