// The Kubernetes object model as Skiff serves it. The type of every served kind, its list and what they
// reach is generated from the API facts (generated/types.ts, by scripts/generate-api-types.mjs); this file
// keeps the shapes the object model itself adds: any object (KubeObject), any list, Status, who asked.
import type { ListMeta, ObjectMeta, ResourceTypes } from './generated/types.js';

export type * from './generated/types.js';

declare module './generated/types.js' {
  interface ObjectMeta {
    /** Pending initializers (the alpha `metadata.initializers` field, kept by Skiff). */
    initializers?: { pending: { name: string }[]; result?: Status };
  }
}

export interface TypeMeta {
  apiVersion?: string;
  kind?: string;
}

/** Any object the API serves: a built-in kind's generated type extends it; unknown fields round-trip. */
export interface KubeObject extends TypeMeta {
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> extends TypeMeta {
  metadata: ListMeta;
  items: T[];
}

export interface StatusCause {
  type?: string;
  message?: string;
  field?: string;
  reason?: string;
}

export interface Status extends TypeMeta {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: ListMeta;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

/** A resource quantity as written: `"100m"`, `"1Gi"`, or a plain number. */
export type Quantity = string | number;
export type ResourceList = Record<string, Quantity>;

/** Who made a request, as authentication established it. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** A served resource as kubectl names it: `pods`, `deployments.apps`. */
export type ResourceName = keyof ResourceTypes & string;
