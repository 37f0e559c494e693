import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import facts from './generated/etcd-api.json' with { type: 'json' };
import { CodedStoreError } from '@skiff/store';
import { EtcdStoreError } from './errors.js';

/** etcd's v3 API types, built once from the generated facts (names, numbers, types). */
const root = protobuf.Root.fromJSON({ nested: facts.nested } as protobuf.INamespace);
root.resolveAll();

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, bytes: Buffer, defaults: true, arrays: true, objects: false };

/** A key-value pair as etcd answers it (mvccpb.KeyValue). */
export interface KeyValue {
  key: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
  value: Buffer;
}

export interface ResponseHeader {
  cluster_id: number;
  member_id: number;
  revision: number;
  raft_term: number;
}

export interface RangeRequest {
  key: Buffer;
  range_end?: Buffer;
  limit?: number;
  revision?: number;
  keys_only?: boolean;
  count_only?: boolean;
  serializable?: boolean;
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: KeyValue[];
  more: boolean;
  count: number;
}

export interface Compare {
  result: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
  target: 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';
  key: Buffer;
  version?: number;
  create_revision?: number;
  mod_revision?: number;
}

export type RequestOp =
  | { request_range: RangeRequest }
  | { request_put: { key: Buffer; value: Buffer; prev_kv?: boolean } }
  | { request_delete_range: { key: Buffer; range_end?: Buffer; prev_kv?: boolean } };

export interface ResponseOp {
  response_range?: RangeResponse;
  response_put?: { header: ResponseHeader; prev_kv?: KeyValue };
  response_delete_range?: { header: ResponseHeader; deleted: number; prev_kvs: KeyValue[] };
}

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface WatchEvent {
  type: 'PUT' | 'DELETE';
  kv: KeyValue;
  prev_kv?: KeyValue;
}

export interface WatchResponse {
  header: ResponseHeader;
  watch_id: number;
  created: boolean;
  canceled: boolean;
  compact_revision: number;
  cancel_reason: string;
  fragment: boolean;
  events: WatchEvent[];
}

export interface WatchCreate {
  key: Buffer;
  range_end?: Buffer;
  start_revision?: number;
  progress_notify?: boolean;
  prev_kv?: boolean;
}

interface Method {
  path: string;
  serialize: (value: object) => Buffer;
  deserialize: (bytes: Buffer) => unknown;
}

const methods = new Map<string, Method>();

function method(service: string, name: string): Method {
  const key = `${service}.${name}`;
  let found = methods.get(key);
  if (found) return found;
  const rpc = root.lookupService(`etcdserverpb.${service}`).methods[name];
  if (!rpc) throw new Error(`etcd has no method ${key}`);
  const requestType = root.lookupType(rpc.requestType);
  const responseType = root.lookupType(rpc.responseType);
  found = {
    path: `/etcdserverpb.${service}/${name}`,
    serialize: (value) => Buffer.from(requestType.encode(requestType.fromObject(value)).finish()),
    deserialize: (bytes) => responseType.toObject(responseType.decode(bytes), TO_OBJECT),
  };
  methods.set(key, found);
  return found;
}

/** gRPC status codes after which the same call may go to another member. */
const FAIL_OVER = new Set([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.CANCELLED]);
/** etcd's own transient answers: a member without a leader, or in the middle of an election. */
const TRANSIENT = ['etcdserver: leader changed', 'etcdserver: no leader', 'etcdserver: request timed out', 'etcdserver: too many requests'];

export function isTransient(err: unknown): boolean {
  const error = err as { code?: number; details?: string; message?: string };
  if (typeof error?.code === 'number' && FAIL_OVER.has(error.code)) return true;
  const text = error?.details ?? error?.message ?? '';
  return TRANSIENT.some((reason) => text.includes(reason));
}

export interface EtcdTls {
  caPem?: Buffer;
  certPem?: Buffer;
  keyPem?: Buffer;
}

export interface EtcdClientOptions {
  /** `http://host:port` or `https://host:port` of each member; calls go to one and move on when it fails. */
  endpoints: string[];
  tls?: EtcdTls;
  /** Deadline of one unary call. */
  callTimeoutMs: number;
  /** How long a call keeps trying other members (and the same one after an election) before it fails. */
  retryForMs: number;
}

/**
 * etcd's v3 gRPC API over @grpc/grpc-js, messages encoded with protobufjs from the generated facts. One channel per
 * member; a call that fails for want of a member (unavailable, no leader, leader changed) is made again on the next
 * member until `retryForMs` has passed.
 */
export class EtcdClient {
  private readonly clients: grpc.Client[];
  private current = 0;
  private closed = false;

  constructor(private readonly options: EtcdClientOptions) {
    if (options.endpoints.length === 0) throw new EtcdStoreError('SKIFF_ERR_ETCD_OPTIONS', { detail: 'endpoints: name at least one etcd member' });
    this.clients = options.endpoints.map((endpoint) => {
      const url = new URL(endpoint);
      const secure = url.protocol === 'https:';
      const credentials = secure
        ? grpc.credentials.createSsl(options.tls?.caPem ?? null, options.tls?.keyPem ?? null, options.tls?.certPem ?? null)
        : grpc.credentials.createInsecure();
      return new grpc.Client(url.host, credentials, {
        'grpc.max_receive_message_length': -1,
        'grpc.max_send_message_length': -1,
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 1000,
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': 5_000,
      });
    });
  }

  get endpoint(): string {
    return this.options.endpoints[this.current]!;
  }

  range(request: RangeRequest): Promise<RangeResponse> {
    return this.call('KV', 'Range', request);
  }

  txn(request: TxnRequest): Promise<TxnResponse> {
    return this.call('KV', 'Txn', request);
  }

  compact(revision: number): Promise<{ header: ResponseHeader }> {
    return this.call('KV', 'Compact', { revision, physical: false });
  }

  status(): Promise<{ header: ResponseHeader; version: string; dbSize: number; leader: number }> {
    return this.call('Maintenance', 'Status', {});
  }

  /** Opens a Watch stream on the current member; the caller sends create requests and reads responses. */
  watchStream(): grpc.ClientDuplexStream<object, WatchResponse> {
    this.assertOpen();
    const { path, serialize, deserialize } = method('Watch', 'Watch');
    return this.clients[this.current]!.makeBidiStreamRequest(path, serialize, deserialize as (bytes: Buffer) => WatchResponse);
  }

  /** The next member, after a call or a stream on the current one failed. */
  failOver(): void {
    this.current = (this.current + 1) % this.clients.length;
  }

  close(): void {
    this.closed = true;
    for (const client of this.clients) client.close();
  }

  private async call<Answer>(service: string, name: string, request: object): Promise<Answer> {
    const deadline = Date.now() + this.options.retryForMs;
    let attempt = 0;
    for (;;) {
      this.assertOpen();
      const member = this.current;
      try {
        return await this.callOnce<Answer>(member, service, name, request);
      } catch (err) {
        if (this.closed || !isTransient(err) || Date.now() > deadline) throw err;
        // Another member first; once each has been tried, wait a little (an election takes a moment).
        if (member === this.current) this.failOver();
        attempt++;
        if (attempt % this.clients.length === 0) await new Promise((resolve) => setTimeout(resolve, Math.min(50 * attempt, 500)));
      }
    }
  }

  private callOnce<Answer>(member: number, service: string, name: string, request: object): Promise<Answer> {
    const { path, serialize, deserialize } = method(service, name);
    return new Promise((resolve, reject) => {
      this.clients[member]!.makeUnaryRequest(
        path,
        serialize,
        deserialize,
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + this.options.callTimeoutMs, waitForReady: false } as grpc.CallOptions,
        (err, value) => (err ? reject(err) : resolve(value as Answer)),
      );
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new CodedStoreError('SKIFF_ERR_STORE_CLOSED');
  }
}
