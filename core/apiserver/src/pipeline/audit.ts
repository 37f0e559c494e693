import { randomUUID } from 'node:crypto';
import { isKubeObject, isStatus, type Status, type UserInfo } from '@skiff/api';
import type { ApiRequest, ApiResponse, AuditEvent, AuditStage, Hooks } from '@skiff/kernel';
import { requestUri } from '../util/query.js';
import type { RequestInfo } from './request-info.js';

const WRITE_VERBS = new Set(['create', 'update', 'patch']);

/**
 * Audit events for one request, built only when someone taps the audit hook. Taps must not block: the
 * hook is synchronous and a tap hands events to its own asynchronous sink.
 */
export class AuditRecorder {
  private readonly auditID = randomUUID();
  private readonly received = new Date().toISOString();
  private info?: RequestInfo;
  user?: UserInfo;
  /** Whom `user` acted as, when the request impersonated someone. */
  impersonatedUser?: UserInfo;
  /** Added to ResponseComplete (and Panic) when not empty: admission's auditAnnotations. */
  annotations?: Record<string, string>;

  constructor(
    private readonly hooks: Hooks,
    private readonly request: ApiRequest,
  ) {}

  requestReceived(info: RequestInfo): void {
    this.info = info;
    this.emit('RequestReceived');
  }

  /** ResponseComplete for normal responses; `Panic` when the server itself failed (a 500 it did not mean). */
  responseComplete(response: ApiResponse, panic: boolean): void {
    const status = statusOf(response);
    const object = this.info && WRITE_VERBS.has(this.info.verb) && response.status < 300 && isKubeObject(response.body) ? response.body : undefined;
    this.emit(panic ? 'Panic' : 'ResponseComplete', {
      responseStatus: { code: response.status, ...(status?.reason ? { reason: status.reason } : {}), ...(status?.message ? { message: status.message } : {}) },
      ...(object ? { requestObject: object } : {}),
      ...(response.body !== undefined && !response.stream && typeof response.body === 'object' && !ArrayBuffer.isView(response.body)
        ? { responseObject: response.body }
        : {}),
      ...(this.annotations && Object.keys(this.annotations).length ? { annotations: { ...this.annotations } } : {}),
    });
  }

  private emit(stage: AuditStage, extra: Partial<AuditEvent> = {}): void {
    const info = this.info;
    this.hooks.audit.call({
      auditID: this.auditID,
      stage,
      verb: info?.verb ?? this.request.method.toLowerCase(),
      requestURI: requestUri(this.request.path, this.request.query),
      ...(this.user ? { user: this.user } : {}),
      ...(this.impersonatedUser ? { impersonatedUser: this.impersonatedUser } : {}),
      sourceIPs: this.request.remoteAddress ? [this.request.remoteAddress] : [],
      ...(this.request.headers['user-agent'] ? { userAgent: this.request.headers['user-agent'] } : {}),
      ...(info?.isResourceRequest
        ? {
            objectRef: {
              resource: info.resource,
              ...(info.namespace ? { namespace: info.namespace } : {}),
              ...(info.name ? { name: info.name } : {}),
              apiGroup: info.apiGroup,
              apiVersion: info.apiVersion,
              ...(info.subresource ? { subresource: info.subresource } : {}),
            },
          }
        : {}),
      requestReceivedTimestamp: this.received,
      stageTimestamp: new Date().toISOString(),
      ...extra,
    });
  }
}

function statusOf(response: ApiResponse): Status | undefined {
  return isStatus(response.body) ? response.body : undefined;
}

/** Wraps a watch stream so ResponseComplete is recorded when the stream ends, not when it starts. */
export async function* auditedStream<T>(stream: AsyncIterable<T>, onEnd: () => void): AsyncGenerator<T> {
  try {
    yield* stream;
  } finally {
    onEnd();
  }
}
