import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import facts from './generated/cri-api.json' with { type: 'json' };
import { ContainerdError } from './errors.js';

/** The CRI v1 types, built once from the generated facts (names, numbers, types). */
const root = protobuf.Root.fromJSON({ nested: { runtime: { nested: { v1: { nested: facts.nested } } } } } as protobuf.INamespace);

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };

type Service = 'RuntimeService' | 'ImageService';

/** A plain object in CRI's own field names (snake_case), as protobufjs reads and writes them. */
export type CriMessage = Record<string, unknown>;

interface Method {
  path: string;
  serialize: (value: CriMessage) => Buffer;
  deserialize: (bytes: Buffer) => CriMessage;
}

function method(service: Service, name: string): Method {
  const definition = root.lookupService(`runtime.v1.${service}`).methods[name];
  if (!definition) throw new Error(`CRI has no method ${service}.${name}`);
  const request = root.lookupType(`runtime.v1.${definition.requestType}`);
  const response = root.lookupType(`runtime.v1.${definition.responseType}`);
  return {
    path: `/runtime.v1.${service}/${name}`,
    serialize: (value) => Buffer.from(request.encode(request.fromObject(value)).finish()),
    deserialize: (bytes) => response.toObject(response.decode(bytes), TO_OBJECT),
  };
}

const methods = new Map<string, Method>();

/** gRPC's status name as Go's grpc prints it ("NotFound", "DeadlineExceeded"). */
function codeName(code: grpc.status): string {
  const name = grpc.status[code];
  if (!name) return String(code);
  return name.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
}

/** A CRI call that failed: the gRPC status code name and containerd's message, as the kubelet shows them. */
export class CriCallError extends Error {
  constructor(
    readonly method: string,
    readonly grpcCode: string,
    readonly details: string,
  ) {
    super(`rpc error: code = ${grpcCode} desc = ${details}`);
    this.name = 'CriCallError';
  }
}

/**
 * CRI v1 over gRPC to a containerd socket: one HTTP/2 connection, unary calls with a deadline. Messages are
 * encoded with protobufjs from the generated facts, so no generated code is checked in.
 */
export class CriClient {
  private readonly client: grpc.Client;
  /** Time spent inside CRI calls, by method: the floor Skiff's own overhead is measured against. */
  readonly timings = new Map<string, { calls: number; totalMs: number }>();

  constructor(socket: string) {
    this.client = new grpc.Client(`unix://${socket}`, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
    });
  }

  runtime(name: string, request: CriMessage = {}, timeoutMs = 120_000): Promise<CriMessage> {
    return this.call('RuntimeService', name, request, timeoutMs);
  }

  image(name: string, request: CriMessage = {}, timeoutMs = 600_000): Promise<CriMessage> {
    return this.call('ImageService', name, request, timeoutMs);
  }

  /** Resolves once the connection is up, or rejects after the deadline. */
  waitForReady(deadlineMs: number): Promise<void> {
    return new Promise((resolve, reject) =>
      this.client.waitForReady(Date.now() + deadlineMs, (err) =>
        err ? reject(new ContainerdError('SKIFF_ERR_CONTAINERD_START', { detail: err.message })) : resolve(),
      ),
    );
  }

  close(): void {
    this.client.close();
  }

  private call(service: Service, name: string, request: CriMessage, timeoutMs: number): Promise<CriMessage> {
    const key = `${service}.${name}`;
    let m = methods.get(key);
    if (!m) methods.set(key, (m = method(service, name)));
    const { path, serialize, deserialize } = m;
    const began = performance.now();
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(path, serialize, deserialize, request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, value) => {
        const timing = this.timings.get(name) ?? { calls: 0, totalMs: 0 };
        timing.calls++;
        timing.totalMs += performance.now() - began;
        this.timings.set(name, timing);
        if (err) reject(new CriCallError(name, codeName(err.code), err.details || err.message));
        else resolve(value!);
      });
    });
  }
}

/** True for the gRPC NotFound answer (a sandbox, container or image that is gone). */
export function isNotFound(err: unknown): boolean {
  return err instanceof CriCallError && err.grpcCode === 'NotFound';
}
