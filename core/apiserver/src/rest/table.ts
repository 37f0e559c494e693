import { errors, type KubeObject, type ListMeta } from '@skiff/api';
import type { ResourceDefinition, TableColumn } from '@skiff/kernel';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableFormat {
  apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
  includeObject: IncludeObject;
}

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

/** A meta.k8s.io Table: an object of its own, so it can stand where objects go (a watch event's, say). */
export interface Table extends KubeObject {
  kind: 'Table';
  apiVersion: string;
  metadata: ListMeta;
  columnDefinitions: TableColumn[];
  rows: TableRow[];
}

const FALLBACK_COLUMNS: TableColumn[] = [
  { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
  { name: 'Created At', type: 'date', description: 'CreationTimestamp is the server time when this object was created.', priority: 0 },
];

/**
 * Whether the client asked for a Table (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io,…`). The first
 * media type in the header that the server can produce wins, as in Kubernetes's content negotiation.
 */
export function tableFormatOf(accept: string | undefined, query: Record<string, string | undefined>): TableFormat | undefined {
  if (!accept || !accept.includes('as=Table')) return undefined;
  for (const entry of accept.split(',')) {
    const [type, ...params] = entry.split(';').map((part) => part.trim());
    const values = new Map(params.map((param) => param.split('=', 2) as [string, string]));
    if (values.get('as') === 'Table' && values.get('g') === 'meta.k8s.io' && (type === 'application/json' || type === '*/*')) {
      const version = values.get('v');
      if (version === 'v1' || version === 'v1beta1') return { apiVersion: `meta.k8s.io/${version}`, includeObject: includeObjectOf(query) };
      continue;
    }
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return undefined;
  }
  return undefined;
}

const PRODUCED_TYPES = new Set(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/*', '*/*']);

/**
 * Refuses (406) a request whose Accept header leaves only Tables for an endpoint that has none (a review's
 * create, pods/eviction), as kube-apiserver does for storage without a table convertor; a header that
 * also takes the object as it is passes.
 */
export function refuseTableWithoutConvertor(accept: string | undefined): void {
  if (!accept?.includes('as=Table')) return;
  for (const entry of accept.split(',')) {
    const [type = '', ...params] = entry.split(';').map((part) => part.trim());
    const as = params.find((param) => param.startsWith('as='));
    if (PRODUCED_TYPES.has(type) && (as === undefined || as.startsWith('as=PartialObjectMetadata'))) return;
  }
  throw errors.notAcceptable('only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf');
}

function includeObjectOf(query: Record<string, string | undefined>): IncludeObject {
  const value = query.includeObject;
  if (value === undefined || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw errors.badRequest(`includeObject must be one of None, Metadata, Object (got ${JSON.stringify(value)})`);
}

export function tableColumns(definition: ResourceDefinition): TableColumn[] {
  return definition.table?.columns ?? FALLBACK_COLUMNS;
}

export function tableRow(definition: ResourceDefinition, object: KubeObject, format: TableFormat, now: number): TableRow {
  const cells = definition.table ? definition.table.cells(object, now) : [object.metadata.name, object.metadata.creationTimestamp];
  switch (format.includeObject) {
    case 'None':
      return { cells };
    case 'Object':
      return { cells, object };
    case 'Metadata':
      return { cells, object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata } };
  }
}

export function toTable(definition: ResourceDefinition, objects: KubeObject[], format: TableFormat, metadata: ListMeta): Table {
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: format.apiVersion,
    metadata,
    columnDefinitions: tableColumns(definition),
    rows: objects.map((object) => tableRow(definition, object, format, now)),
  };
}
