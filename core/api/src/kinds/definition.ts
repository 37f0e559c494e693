// What the API server needs to serve one kind. Written with `defineKind` (define-kind.ts), which derives
// most of it from the generated API facts; the kernel's `resources` hook takes these.
import type { ObjectSchema } from '../schemas/language.js';
import type { NumberLiterals } from '../schemas/number-literals.js';
import type { KubeObject, StatusCause } from '../types.js';

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  /** 0 prints by default; 1 only with `-o wide`. */
  priority: number;
}

/** Where a kind's Scale subresource reads and writes, as JSON paths (`.spec.replicas`), like a CRD's scale subresource. */
export interface ScaleDefinition {
  specReplicasPath: string;
  statusReplicasPath: string;
  /** A label selector (object or string form); its string form becomes Scale's `status.selector`. */
  labelSelectorPath?: string;
}

/**
 * Another version of a stored kind (autoscaling/v1 HorizontalPodAutoscaler beside the stored v2): requests to it
 * are served by the stored version's definition, objects converted on the way in and out.
 */
export interface VersionConversion {
  /** An object of this version as the stored version (apiVersion included); may be asynchronous (a CRD's webhook). */
  toStorage(object: KubeObject): KubeObject | Promise<KubeObject>;
  /**
   * A stored object (in the stored version, or one stored before it) as this version, apiVersion included; may be
   * asynchronous. A failure it throws is the request's answer.
   */
  fromStorage(object: KubeObject): KubeObject | Promise<KubeObject>;
  /**
   * The stored resource when it belongs to another group (events.k8s.io/v1 Events are core Events); by default
   * this definition's group and resource.
   */
  storage?: { group: string; resource: string };
  /** The field selector labels this version offers, each with the stored version's label it stands for; others are refused. */
  fieldLabels?: Readonly<Record<string, string>>;
  /**
   * Validation of writes made through this version, on their stored form, in place of the stored definition's
   * (upstream validates an Event by the API version it was written through).
   */
  validate?(object: KubeObject, old: KubeObject | undefined, subresource: string): StatusCause[];
}

export interface ResourceDefinition {
  group: string;
  version: string;
  kind: string;
  listKind?: string;
  /** Plural: "pods". */
  resource: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Subresources served: status, scale, binding, log, eviction… */
  subresources?: string[];
  verbs?: string[];
  /** The kind's schema, for OpenAPI documents (`kubectl explain`) and field sets; absent for schemaless kinds. */
  schema?: ObjectSchema;
  /**
   * Type check of a decoded body; returns errors naming the field ("spec.replicas"). `numberLiterals`: how
   * a JSON body wrote numbers that JSON.parse cannot tell apart (`1e3` for 1000), where it wrote any.
   */
  decode?(object: unknown, strict: boolean, numberLiterals?: NumberLiterals): { errors: StatusCause[]; unknownFields: string[] };
  /** Fills in defaults on create and update, like the Kubernetes defaulting functions. */
  defaults?(object: KubeObject): void;
  /** Semantic validation: 422 Invalid causes. `subresource` names the endpoint an update came through ('' for the object). */
  validate?(object: KubeObject, old?: KubeObject, subresource?: string): StatusCause[];
  /** Which fields count as spec for `metadata.generation` and as status for the status subresource. */
  hasStatus?: boolean;
  /**
   * Whether the server keeps `metadata.generation` (1 on create, +1 when anything but metadata and status
   * changes), as upstream does for workloads, policies and custom resources. `false`: the generation stays
   * what the object was created with (upstream's Events, ConfigMaps, Pods…). Absent counts as true.
   */
  generation?: boolean;
  /** Table columns for `kubectl get`, and a function building one row's cells. */
  table?: { columns: TableColumn[]; cells(object: KubeObject, now: number): unknown[] };
  /** Field selectors beyond metadata.name and metadata.namespace: "spec.nodeName" → value. */
  fieldSelectors?: Record<string, (object: KubeObject) => string | undefined>;
  /** Called on create before admission: reset status, set phase, etc. */
  prepareForCreate?(object: KubeObject): void;
  /** Called on update: keep status from old on main-resource updates, spec on status updates. */
  prepareForUpdate?(object: KubeObject, old: KubeObject, subresource: string): void;
  /** The Scale subresource's view of the kind. */
  scale?: ScaleDefinition;
  /**
   * How long a DELETE lets the object wind down before it goes (a running pod's grace period), given the
   * grace the request asked for; 0 or absent deletes at once.
   */
  deletionGracePeriod?(object: KubeObject, requested: number | undefined): number;
  /** Finalizers the kind keeps outside metadata.finalizers (a namespace's spec.finalizers): a delete waits for them too. */
  deletionFinalizers?(object: KubeObject): string[];
  /** Called on the copy a DELETE marks for deletion without removing it (a namespace turns Terminating). */
  onDeletionMarked?(object: KubeObject): void;
  /** false for kinds without Go types to merge by (custom resources): strategic merge patches are refused (415). */
  strategicMergePatch?: boolean;
  /** Set on a version served from another version's storage; requests go through the stored version's definition. */
  conversion?: VersionConversion;
  /**
   * On a stored version: every object of the kind read from the store, whatever version it was stored in, as this
   * version shows it (a custom resource stored before its CRD's storage version changed, or before its schema
   * gained defaults).
   */
  readConversion?(object: KubeObject): KubeObject | Promise<KubeObject>;
}
