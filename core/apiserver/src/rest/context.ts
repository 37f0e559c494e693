import type { UserInfo } from '@skiff/api';
import type { NumberLiterals } from '@skiff/api/schema';
import type { AdmissionOutcome, ApiRequest, Hooks, Logger, ResourceDefinition } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import type { RepeatedFields } from '../pipeline/duplicate-fields.js';
import type { RequestInfo } from '../pipeline/request-info.js';
import type { KindHandlers } from './handlers.js';
import type { InitializerRegistryImpl } from '../registry/initializer-registry.js';
import type { ResourceRegistryImpl } from '../registry/resource-registry.js';

/** What every handler shares: the parts of a running API server. */
export interface ServerCore {
  hooks: Hooks;
  store: Store;
  registry: ResourceRegistryImpl;
  initializers: InitializerRegistryImpl;
  /** Kinds' own handlers for some of their verbs and subresources. */
  handlers: KindHandlers;
  logger: Logger;
  /** How often watches that allow bookmarks get one. */
  bookmarkIntervalMs: number;
  /** How long a read at a resourceVersion newer than the store waits for it before answering 504. */
  resourceVersionWaitMs: number;
  /** Aborted when the server stops: ends every open watch. */
  stopping: AbortSignal;
}

/** One authenticated, authorized resource request on its way through the handlers. */
export interface RestContext {
  core: ServerCore;
  request: ApiRequest;
  info: RequestInfo;
  user: UserInfo;
  definition: ResourceDefinition;
  /** The version the request was made through when `definition` is the stored one it converts to. */
  servedAs?: ResourceDefinition;
  /** `dryRun=All`: run everything but the store write. */
  dryRun: boolean;
  /** Warnings for the response's Warning header (unknown fields with fieldValidation=Warn). */
  warnings: string[];
  /** Fields the request body repeats within one object, for field validation. */
  duplicateFields?: () => RepeatedFields;
  /** How a JSON body wrote numbers JSON.parse cannot tell apart (`1e3`), for the type check of integer fields. */
  numberLiterals?: () => NumberLiterals | undefined;
  /** A server-side apply already recorded its manager's fields: the write path must not record an update too. */
  managedFieldsRecorded?: boolean;
  /** Admission taps' callbacks for when the request is answered (AdmissionRequest.onFinished); shared by copies of the context. */
  finishers: ((outcome: AdmissionOutcome) => void)[];
  /** Annotations admission taps add for the request's audit event (AdmissionRequest.auditAnnotations); shared by copies. */
  auditAnnotations: Record<string, string>;
}
