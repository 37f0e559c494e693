import type { KubeObject, ResourceDefinition } from '@skiff/api';
import { expect } from 'vitest';

/** The clock the kinds' tests print tables at. */
export const NOW = Date.parse('2024-05-01T12:00:00Z');
/** When an admitted object was created: 3h5m before NOW, so Age columns print '3h5m'. */
export const CREATED = new Date(NOW - 3 * 3600_000 - 5 * 60_000).toISOString();

/** A kind, by its plural (looked up among the harness's definitions) or as a definition. */
export type Kind = string | ResourceDefinition;

export interface KindHarnessOptions {
  /** A uid to give objects on create, where defaults or validation depend on it (jobs' selectors). */
  uid?: string;
}

/**
 * What the kinds' tests share: the API server's write path for one object (decode, prepareForCreate,
 * defaults, validate) and the table row it prints at NOW. A plural is looked up in `kinds`; the first
 * definition with it wins (core v1 events before events.k8s.io's).
 */
export function kindHarness(kinds: readonly ResourceDefinition[], options: KindHarnessOptions = {}) {
  const definition = (kind: Kind): ResourceDefinition => {
    if (typeof kind !== 'string') return kind;
    const found = kinds.find((d) => d.resource === kind);
    if (!found) throw new Error(`no definition for ${kind}`);
    return found;
  };

  /** What the API server runs on a write: decode, prepareForCreate (without `old`), defaults; returns the object and its causes as "field: message". */
  function admit(kind: Kind, body: Record<string, unknown>, old?: KubeObject): { object: KubeObject; causes: string[] } {
    const d = definition(kind);
    const object = structuredClone(body) as KubeObject;
    expect(d.decode!(object, true)).toEqual({ errors: [], unknownFields: [] });
    if (!old) {
      if (options.uid) object.metadata.uid ??= options.uid;
      d.prepareForCreate?.(object);
    }
    d.defaults?.(object);
    const causes = d.validate!(object, old).map((c) => `${c.field}: ${c.message}`);
    object.metadata.creationTimestamp ??= CREATED;
    return { object, causes };
  }

  /** Admits a create that must pass validation. */
  function create(kind: Kind, body: Record<string, unknown>): KubeObject {
    const { object, causes } = admit(kind, body);
    expect(causes).toEqual([]);
    return object;
  }

  const fields = (kind: Kind, body: Record<string, unknown>, old?: KubeObject): string[] => admit(kind, body, old).causes;
  const cells = (kind: Kind, object: KubeObject) => definition(kind).table!.cells(object, NOW);

  return { NOW, CREATED, definition, admit, create, fields, cells };
}
