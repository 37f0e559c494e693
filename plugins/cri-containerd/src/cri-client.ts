import * as grpc from '@grpc/grpc-js';
import type { ContainerConfig, ContainerRuntimeState, PodSandboxConfig, SandboxState } from '@skiff/kernel';
import protobuf from 'protobufjs';
import facts from './generated/cri-api.json' with { type: 'json' };
import { ContainerdError } from './errors.js';

/** The CRI v1 types, built once from the generated facts (names, numbers, types). */
const root = protobuf.Root.fromJSON({ nested: { runtime: { nested: { v1: { nested: facts.nested } } } } } as protobuf.INamespace);

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };

type Service = 'RuntimeService' | 'ImageService';

/** A plain object in CRI's own field names (snake_case), as protobufjs reads and writes them. */
export type CriMessage = Record<string, unknown>;

// The answers Skiff reads, in CRI's field names. protobufjs decodes them with every scalar, list and map present
// (enums by name, 64-bit integers as numbers); a message field is absent when containerd leaves it out.

/** A sandbox in the answers of ListPodSandbox and PodSandboxStatus. */
export interface CriSandbox {
  id: string;
  metadata: PodSandboxConfig['metadata'];
  state: SandboxState;
  created_at: number;
  network?: { ip: string; additional_ips: { ip: string }[] };
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A container in the answer of ListContainers. */
export interface CriContainer {
  id: string;
  pod_sandbox_id: string;
  metadata: ContainerConfig['metadata'];
  state: ContainerRuntimeState;
  created_at: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A container in the answer of ContainerStatus. */
export interface CriContainerStatus extends Omit<CriContainer, 'pod_sandbox_id'> {
  pod_sandbox_id?: string;
  started_at: number;
  finished_at: number;
  exit_code: number;
  image?: { image: string };
  image_ref: string;
  reason: string;
  message: string;
  log_path: string;
}

/** A CRI UInt64Value: absent (or null) when containerd has no figure. */
type CriUInt64 = { value: number } | null | undefined;

/** One container's figures in the answer of ListContainerStats; containerd leaves out what it could not read. */
export interface CriContainerStats {
  attributes?: { id: string; metadata?: ContainerConfig['metadata'] | null; labels: Record<string, string>; annotations: Record<string, string> } | null;
  /** `timestamp` in nanoseconds since the epoch. */
  cpu?: { timestamp: number; usage_core_nano_seconds?: CriUInt64; usage_nano_cores?: CriUInt64 } | null;
  memory?: {
    timestamp: number;
    working_set_bytes?: CriUInt64;
    available_bytes?: CriUInt64;
    usage_bytes?: CriUInt64;
    rss_bytes?: CriUInt64;
    page_faults?: CriUInt64;
    major_page_faults?: CriUInt64;
  } | null;
}

interface StreamingAnswer {
  url: string;
}

export interface RuntimeAnswers {
  Version: { version: string; runtime_name: string; runtime_version: string; runtime_api_version: string };
  RunPodSandbox: { pod_sandbox_id: string };
  StopPodSandbox: object;
  RemovePodSandbox: object;
  PodSandboxStatus: { status: CriSandbox; info: Record<string, string> };
  ListPodSandbox: { items: CriSandbox[] };
  CreateContainer: { container_id: string };
  StartContainer: object;
  StopContainer: object;
  RemoveContainer: object;
  ContainerStatus: { status: CriContainerStatus; info: Record<string, string> };
  ListContainers: { containers: CriContainer[] };
  ListContainerStats: { stats: CriContainerStats[] };
  ExecSync: { stdout: Uint8Array; stderr: Uint8Array; exit_code: number };
  Exec: StreamingAnswer;
  Attach: StreamingAnswer;
  PortForward: StreamingAnswer;
  ReopenContainerLog: object;
}

export interface ImageAnswers {
  PullImage: { image_ref: string };
  ImageStatus: { image?: { id: string; repo_tags: string[]; size: number } | null };
}

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
 * Calls that change nothing when made twice. Only these are made again after containerd was found gone: the
 * others (a sandbox or container made twice, a command run twice) are left to the kubelet's next sync.
 */
/** What containerd's CRI answers between its socket appearing and its service starting. */
const NOT_INITIALIZED = 'server is not initialized yet';
const REPEATABLE: ReadonlySet<string> = new Set([
  'Version',
  'StopPodSandbox',
  'RemovePodSandbox',
  'PodSandboxStatus',
  'ListPodSandbox',
  'StopContainer',
  'RemoveContainer',
  'ContainerStatus',
  'ListContainers',
  'Exec',
  'Attach',
  'PortForward',
  'ReopenContainerLog',
  'PullImage',
  'ImageStatus',
]);

export interface CriClientOptions {
  /**
   * Asked when a call finds containerd unreachable: resolves true once containerd is (again) there to answer — a
   * repeatable call is then made once more — or false when it will not be.
   */
  available?: () => Promise<boolean>;
  /** How long to wait for the connection to the containerd that is back. */
  reconnectMs?: number;
}

/**
 * CRI v1 over gRPC to a containerd socket: one HTTP/2 connection, unary calls with a deadline. Messages are
 * encoded with protobufjs from the generated facts, so no generated code is checked in.
 */
export class CriClient {
  private readonly client: grpc.Client;
  /** Time spent inside CRI calls, by method: the floor Skiff's own overhead is measured against. */
  readonly timings = new Map<string, { calls: number; totalMs: number }>();

  constructor(
    socket: string,
    private readonly options: CriClientOptions = {},
  ) {
    this.client = new grpc.Client(`unix://${socket}`, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      // A local socket: after containerd is back, connect again within a second rather than gRPC's minutes.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
    });
  }

  runtime<M extends keyof RuntimeAnswers>(name: M, request: CriMessage = {}, timeoutMs = 120_000): Promise<RuntimeAnswers[M]> {
    return this.call('RuntimeService', name, request, timeoutMs);
  }

  image<M extends keyof ImageAnswers>(name: M, request: CriMessage = {}, timeoutMs = 600_000): Promise<ImageAnswers[M]> {
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

  /** `Answer` is what the method's response message decodes to (RuntimeAnswers and ImageAnswers mirror CRI's messages). */
  private async call<Answer>(service: Service, name: string, request: CriMessage, timeoutMs: number): Promise<Answer> {
    try {
      return await this.callOnce<Answer>(service, name, request, timeoutMs);
    } catch (err) {
      const { available, reconnectMs = 20_000 } = this.options;
      if (!available || !(err instanceof CriCallError) || err.grpcCode !== 'Unavailable' || !REPEATABLE.has(name)) throw err;
      if (!(await available())) throw err;
      await this.waitForReady(reconnectMs).catch(() => Promise.reject(err));
      const deadline = Date.now() + reconnectMs;
      for (;;) {
        try {
          return await this.callOnce<Answer>(service, name, request, timeoutMs);
        } catch (again) {
          // A containerd just started answers on its socket a moment before its CRI service is up.
          if (!(again instanceof CriCallError) || !again.message.includes(NOT_INITIALIZED) || Date.now() > deadline) throw again;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
  }

  private callOnce<Answer>(service: Service, name: string, request: CriMessage, timeoutMs: number): Promise<Answer> {
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
        else resolve(value as Answer);
      });
    });
  }
}

/** True for the gRPC NotFound answer (a sandbox, container or image that is gone). */
export function isNotFound(err: unknown): boolean {
  return err instanceof CriCallError && err.grpcCode === 'NotFound';
}
