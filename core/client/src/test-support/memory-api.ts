import { randomUUID } from 'node:crypto';
import { errors, isApiError, RESOURCES, type KubeObject, type ResourceType, type Status, type UserInfo } from '@skiff/api';
import type { ApiHandler, ApiRequest, ApiResponse, WatchEvent } from '@skiff/kernel';

/**
 * Test scaffolding for the transport contract: a small API server over a Map, with what the client
 * depends on done for real — one revision counter, resourceVersion checks, paged lists from a snapshot,
 * watches that replay the event log then stream live, bookmarks, compaction (410), bearer tokens.
 * Only merge patches and equality selectors are understood; anything else is refused, not faked.
 */
export class MemoryApiHandler implements ApiHandler {
  /** Every authenticated request, in arrival order. */
  readonly requests: ApiRequest[] = [];
  /** How a watch from a compacted resourceVersion is refused: an ERROR event (as Kubernetes does) or HTTP 410. */
  goneAs: 'event' | 'status' = 'event';
  /** While true, new watches are answered 503 (a server that cannot serve watches right now). */
  refuseWatches = false;

  private readonly tokens = new Map<string, UserInfo>();
  private readonly objects = new Map<string, KubeObject>();
  private readonly eventLog: { revision: number; type: ResourceType; event: WatchEvent }[] = [];
  private readonly snapshots = new Map<string, { revision: number; items: KubeObject[] }>();
  private readonly watchers = new Set<Watcher>();
  private revision = 0;
  private compactedRevision = 0;

  issueLoopbackToken(user: UserInfo): string {
    const token = randomUUID();
    this.tokens.set(token, user);
    return token;
  }

  currentRevision(): number {
    return this.revision;
  }

  openWatches(): number {
    return this.watchers.size;
  }

  /** Ends every open watch, as a server does at its timeout or restart. */
  closeWatches(): void {
    for (const watcher of this.watchers) watcher.close();
  }

  /** Sends a BOOKMARK at the current revision to watches that allow bookmarks. */
  bookmark(): void {
    for (const watcher of this.watchers) {
      if (!watcher.bookmarks) continue;
      watcher.push({
        type: 'BOOKMARK',
        object: { apiVersion: apiVersionOf(watcher.type), kind: watcher.type.kind, metadata: { resourceVersion: String(this.revision) } },
      });
    }
  }

  /** Forgets history up to now: older resourceVersions and continue tokens become 410 Gone. */
  compact(): void {
    this.compactedRevision = this.revision;
    this.eventLog.length = 0;
    this.snapshots.clear();
  }

  async handle(request: ApiRequest): Promise<ApiResponse> {
    try {
      const user = this.authenticate(request);
      if (!user) throw errors.unauthorized();
      this.requests.push(request);
      return this.route(request);
    } catch (err) {
      if (!isApiError(err)) throw err;
      return { status: err.status, body: err.toStatus() };
    }
  }

  private authenticate(request: ApiRequest): UserInfo | undefined {
    const match = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
    return match ? this.tokens.get(match[1]) : undefined;
  }

  private route(request: ApiRequest): ApiResponse {
    const target = parsePath(request.path);
    const { type, namespace, name, subresource } = target;
    const body = decodeBody(request.body);
    switch (request.method) {
      case 'GET':
        if (name) return ok(this.mustGet(type, namespace, name));
        return request.query.watch === 'true' ? this.watch(request, target) : ok(this.list(request, target));
      case 'POST':
        if (name && subresource === 'binding' && type.resource === 'pods') return this.bind(type, namespace, name, body);
        if (name) throw errors.pathNotFound(request.path);
        return { status: 201, body: this.create(type, namespace, body as KubeObject) };
      case 'PUT':
        return ok(this.update(type, namespace, name, body as KubeObject, subresource));
      case 'PATCH':
        if (request.headers['content-type'] !== 'application/merge-patch+json') throw errors.unsupportedMediaType(request.headers['content-type'] ?? '');
        return ok(this.patch(type, namespace, name, body));
      case 'DELETE':
        return ok(this.delete(type, namespace, name, body as { preconditions?: { resourceVersion?: string } } | undefined));
      default:
        throw errors.methodNotAllowed(`${request.method} is not served`);
    }
  }

  private list(request: ApiRequest, { type, namespace }: Target): KubeObject {
    const limit = Number(request.query.limit ?? 0);
    let snapshotId = '';
    let offset = 0;
    if (request.query.continue) {
      [snapshotId, offset] = decodeContinue(request.query.continue);
      if (!this.snapshots.has(snapshotId)) throw errors.gone('The provided continue parameter is too old to display a consistent list result.');
    } else {
      snapshotId = randomUUID();
      const matches = filterFor(type, namespace, request.query);
      const items = [...this.objects.entries()]
        .filter(([, object]) => matches(object))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([, object]) => object);
      this.snapshots.set(snapshotId, { revision: this.revision, items });
    }
    const snapshot = this.snapshots.get(snapshotId) as { revision: number; items: KubeObject[] };
    const end = limit > 0 ? offset + limit : snapshot.items.length;
    const more = end < snapshot.items.length;
    if (!more) this.snapshots.delete(snapshotId);
    return {
      apiVersion: apiVersionOf(type),
      kind: `${type.kind}List`,
      metadata: { resourceVersion: String(snapshot.revision), ...(more ? { continue: encodeContinue(snapshotId, end) } : {}) },
      items: snapshot.items.slice(offset, end),
    };
  }

  private watch(request: ApiRequest, { type, namespace }: Target): ApiResponse {
    if (this.refuseWatches) throw errors.unavailable('watches are refused for this test');
    const from = request.query.resourceVersion;
    const fromRevision = from ? Number(from) : 0;
    const matches = filterFor(type, namespace, request.query);
    const watcher = new Watcher(type, matches, request.query.allowWatchBookmarks === 'true');
    if (fromRevision > 0 && fromRevision < this.compactedRevision) {
      const gone = errors.gone(`too old resource version: ${fromRevision} (${this.compactedRevision})`);
      if (this.goneAs === 'status') throw gone;
      watcher.push({ type: 'ERROR', object: gone.toStatus() });
      watcher.close();
      return { status: 200, stream: watcher.events(request.signal) };
    }
    if (fromRevision === 0) {
      for (const object of this.objects.values()) if (matches(object)) watcher.push({ type: 'ADDED', object });
    } else {
      for (const entry of this.eventLog) {
        if (entry.revision > fromRevision && sameType(entry.type, type) && matches(entry.event.object as KubeObject)) watcher.push(entry.event);
      }
    }
    const timeoutSeconds = Number(request.query.timeoutSeconds ?? 0);
    const timer = timeoutSeconds > 0 ? setTimeout(() => watcher.close(), timeoutSeconds * 1000) : undefined;
    this.watchers.add(watcher);
    watcher.onClose = () => {
      clearTimeout(timer);
      this.watchers.delete(watcher);
    };
    return { status: 200, stream: watcher.events(request.signal) };
  }

  private mustGet(type: ResourceType, namespace: string | undefined, name: string | undefined): KubeObject {
    const object = name ? this.objects.get(storageKey(type, namespace, name)) : undefined;
    if (!object) throw errors.notFound(type.resource, type.group, name ?? '');
    return object;
  }

  private create(type: ResourceType, namespace: string | undefined, object: KubeObject): KubeObject {
    const name = object.metadata.name ?? `${object.metadata.generateName ?? ''}${randomUUID().slice(0, 5)}`;
    if (this.objects.has(storageKey(type, namespace, name))) throw errors.alreadyExists(type.resource, type.group, name);
    const metadata = { ...object.metadata, name, uid: randomUUID(), creationTimestamp: new Date().toISOString() };
    if (type.namespaced) metadata.namespace = namespace;
    return this.commit(type, 'ADDED', { ...object, apiVersion: apiVersionOf(type), kind: type.kind, metadata });
  }

  private update(type: ResourceType, namespace: string | undefined, name: string | undefined, object: KubeObject, subresource?: string): KubeObject {
    const current = this.mustGet(type, namespace, name);
    const expected = object.metadata.resourceVersion;
    if (expected && expected !== current.metadata.resourceVersion) {
      throw errors.conflict(
        type.resource,
        type.group,
        name ?? '',
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    const next =
      subresource === 'status'
        ? { ...current, status: object.status }
        : { ...object, status: current.status, metadata: { ...current.metadata, ...object.metadata } };
    return this.commit(type, 'MODIFIED', next);
  }

  private patch(type: ResourceType, namespace: string | undefined, name: string | undefined, patch: unknown): KubeObject {
    return this.commit(type, 'MODIFIED', mergePatch(this.mustGet(type, namespace, name), patch) as KubeObject);
  }

  private delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string | undefined,
    options?: { preconditions?: { resourceVersion?: string } },
  ): Status {
    const current = this.mustGet(type, namespace, name);
    const expected = options?.preconditions?.resourceVersion;
    if (expected && expected !== current.metadata.resourceVersion) throw errors.conflict(type.resource, type.group, name ?? '', 'precondition failed');
    this.commit(type, 'DELETED', current);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200, details: { name, kind: type.resource, uid: current.metadata.uid } };
  }

  private bind(type: ResourceType, namespace: string | undefined, name: string, binding: unknown): ApiResponse {
    const pod = this.mustGet(type, namespace, name);
    const nodeName = (binding as { target?: { name?: string } }).target?.name;
    if (!nodeName) throw errors.badRequest('binding.target.name is required');
    this.commit(type, 'MODIFIED', { ...pod, spec: { ...(pod.spec as object), nodeName } });
    return { status: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
  }

  /** Every write: next revision, frozen stored copy (shared objects must not be mutated), log, fan-out. */
  private commit(type: ResourceType, eventType: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): KubeObject {
    this.revision += 1;
    const stored = deepFreeze(structuredClone({ ...object, metadata: { ...object.metadata, resourceVersion: String(this.revision) } }));
    const key = storageKey(type, stored.metadata.namespace, stored.metadata.name as string);
    if (eventType === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, stored);
    const event: WatchEvent = { type: eventType, object: stored };
    this.eventLog.push({ revision: this.revision, type, event });
    for (const watcher of this.watchers) if (sameType(watcher.type, type) && watcher.matches(stored)) watcher.push(event);
    return stored;
  }
}

/** One open watch: a queue of events drained by the response stream. */
class Watcher {
  onClose?: () => void;
  private readonly queue: WatchEvent[] = [];
  private wake?: () => void;
  private closed = false;

  constructor(
    readonly type: ResourceType,
    readonly matches: (object: KubeObject) => boolean,
    readonly bookmarks: boolean,
  ) {}

  push(event: WatchEvent): void {
    if (this.closed) return;
    this.queue.push(event);
    this.wake?.();
  }

  /** Nothing more is sent; what is already queued still reaches the client. */
  close(): void {
    this.closed = true;
    this.onClose?.();
    this.wake?.();
  }

  async *events(signal: AbortSignal | undefined): AsyncGenerator<WatchEvent> {
    const onAbort = () => this.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        while (this.queue.length > 0) yield this.queue.shift() as WatchEvent;
        if (this.closed || signal?.aborted) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.close();
    }
  }
}

interface Target {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
}

function parsePath(path: string): Target {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const [group, version, rest] = parts[0] === 'api' ? ['', parts[1], parts.slice(2)] : [parts[1], parts[2], parts.slice(3)];
  const find = (resource: string | undefined) =>
    Object.values(RESOURCES).find((t) => t.group === group && t.version === version && t.resource === resource) as ResourceType | undefined;
  const namespaced = rest[0] === 'namespaces' && rest.length >= 3 && find(rest[2])?.namespaced;
  const [namespace, resource, name, subresource] = namespaced ? rest.slice(1) : [undefined, ...rest];
  const type = find(resource);
  if (!type) throw errors.pathNotFound(path);
  return { type, namespace, name, subresource };
}

/** Equality-only label selectors and metadata.name / metadata.namespace field selectors. */
function filterFor(type: ResourceType, namespace: string | undefined, query: Record<string, string | undefined>): (object: KubeObject) => boolean {
  const pairs = (selector: string | undefined) =>
    (selector ? selector.split(',') : []).map((term) => {
      const match = /^([^=!]+)==?(.*)$/.exec(term);
      if (!match) throw errors.badRequest(`unsupported selector term "${term}" (this test server understands k=v only)`);
      return [match[1], match[2]] as const;
    });
  const labels = pairs(query.labelSelector);
  const fields = pairs(query.fieldSelector).map(([field, value]) => {
    if (field !== 'metadata.name' && field !== 'metadata.namespace') throw errors.badRequest(`unsupported field selector "${field}"`);
    return [field.slice('metadata.'.length) as 'name' | 'namespace', value] as const;
  });
  return (object) =>
    (!type.namespaced || !namespace || object.metadata.namespace === namespace) &&
    labels.every(([key, value]) => object.metadata.labels?.[key] === value) &&
    fields.every(([field, value]) => object.metadata[field] === value);
}

function storageKey(type: ResourceType, namespace: string | undefined, name: string): string {
  return `${type.group}/${type.resource}/${type.namespaced ? (namespace ?? '') : ''}/${name}`;
}

function sameType(a: ResourceType, b: ResourceType): boolean {
  return a.group === b.group && a.resource === b.resource;
}

function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

function decodeBody(body: unknown): unknown {
  if (Buffer.isBuffer(body)) body = body.toString('utf8');
  if (typeof body !== 'string') return body;
  if (body === '') return undefined;
  try {
    return JSON.parse(body);
  } catch {
    throw errors.badRequest('the request body is not JSON');
  }
}

function encodeContinue(snapshotId: string, offset: number): string {
  return Buffer.from(JSON.stringify([snapshotId, offset])).toString('base64url');
}

function decodeContinue(token: string): [string, number] {
  try {
    const [snapshotId, offset] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as [string, number];
    return [snapshotId, offset];
  } catch {
    throw errors.badRequest('invalid continue token');
  }
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function ok(body: unknown): ApiResponse {
  return { status: 200, body };
}
