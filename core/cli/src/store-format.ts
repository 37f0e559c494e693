import type { KubeObject } from '@skiff/api';

/**
 * The file `skiff store export` writes and `skiff store import` reads: JSON lines, a header first, then one line per
 * object under `/registry/` in key order, every object as the API server stored it (opened by the sealer, so Secrets
 * are in plain form).
 */
export const EXPORT_KIND = 'SkiffStoreExport';
export const EXPORT_VERSION = 1;
/** Every key the API server writes starts with this; the export holds these and nothing else. */
export const REGISTRY_PREFIX = '/registry/';

export interface ExportHeader {
  kind: typeof EXPORT_KIND;
  version: typeof EXPORT_VERSION;
  /** The store revision every object was read at (one snapshot). */
  revision: number;
  /** How many object lines follow, so a cut-off file is told from a whole one. */
  objects: number;
  /** The plugin that provided the store exported, such as `@skiff/store` (LMDB). */
  store: string;
  preset: string;
  exportedAt: string;
  skiffVersion: string;
}

export interface ExportedObject {
  key: string;
  object: KubeObject;
}

export function headerLine(header: ExportHeader): string {
  return JSON.stringify(header);
}

/** The object as the export keeps it: `resourceVersion` is the old store's revision and means nothing in another. */
export function objectLine(key: string, object: KubeObject): string {
  return JSON.stringify({ key, object } satisfies ExportedObject);
}

/** A line of an export file that is not what it should be; `line` counts from 1, as editors do. */
export class ExportFormatError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${file}:${line}: ${detail}`);
    this.name = 'ExportFormatError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(file: string, line: number, text: string): unknown {
  if (text.trim() === '') throw new ExportFormatError(file, line, 'empty line (each line holds one JSON object)');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ExportFormatError(file, line, `not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

const WHOLE_NUMBER = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** Checks the first line of an export file. */
export function parseHeader(file: string, text: string | undefined): ExportHeader {
  if (text === undefined)
    throw new ExportFormatError(file, 1, `the file is empty: expected a header {"kind":"${EXPORT_KIND}",…} (written by skiff store export)`);
  const value = parseJson(file, 1, text);
  if (!isRecord(value) || value.kind !== EXPORT_KIND)
    throw new ExportFormatError(file, 1, `not a skiff store export: the first line must be a header {"kind":"${EXPORT_KIND}",…}`);
  if (value.version !== EXPORT_VERSION)
    throw new ExportFormatError(file, 1, `export format version ${JSON.stringify(value.version)} is not one this skiff reads (${EXPORT_VERSION})`);
  for (const field of ['revision', 'objects'] as const) {
    if (!WHOLE_NUMBER(value[field]))
      throw new ExportFormatError(file, 1, `the header's "${field}" must be a whole number (got ${JSON.stringify(value[field])})`);
  }
  return value as unknown as ExportHeader;
}

/** Checks one object line: `{"key":"/registry/…","object":{…,"metadata":{…}}}`. */
export function parseObjectLine(file: string, line: number, text: string): ExportedObject {
  const value = parseJson(file, line, text);
  if (!isRecord(value)) throw new ExportFormatError(file, line, 'expected {"key":…,"object":…}');
  const { key, object } = value;
  if (typeof key !== 'string' || !key.startsWith(REGISTRY_PREFIX) || key.length === REGISTRY_PREFIX.length)
    throw new ExportFormatError(file, line, `"key" must be a store key under ${REGISTRY_PREFIX} (got ${JSON.stringify(key)})`);
  if (!isRecord(object) || !isRecord(object.metadata)) throw new ExportFormatError(file, line, `"object" at ${key} must be a Kubernetes object with metadata`);
  const extra = Object.keys(value).filter((field) => field !== 'key' && field !== 'object');
  if (extra.length) throw new ExportFormatError(file, line, `unexpected field "${extra[0]}" beside key and object`);
  return { key, object: object as KubeObject };
}

/** The object to create in the new store: everything kept (uid, ownerReferences, status…) but the old revision. */
export function objectToImport(object: KubeObject): KubeObject {
  const { resourceVersion: _oldRevision, ...metadata } = object.metadata ?? {};
  return { ...{}, ...object, metadata };
}

/** What to count an object as: its kind (objects are stored with one), else the first part of its key. */
export function kindOf(key: string, object: KubeObject): string {
  return typeof object.kind === 'string' && object.kind ? object.kind : (key.slice(REGISTRY_PREFIX.length).split('/')[0] ?? key);
}

/** Counts of objects by kind, kept as objects pass. */
export class KindCounts {
  private readonly counts = new Map<string, number>();
  total = 0;

  add(key: string, object: KubeObject): void {
    const kind = kindOf(key, object);
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    this.total += 1;
  }

  /** `3 ConfigMap, 1 Deployment, …`: most first, then by name. */
  toString(): string {
    return [...this.counts]
      .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
      .map(([kind, count]) => `${count} ${kind}`)
      .join(', ');
  }
}
