export { Kernel, KERNEL_VERSION, createLogger, type KernelOptions, type LoadedPlugin } from './kernel.js';
export { createHooks, LIFECYCLE_STAGE, ADMISSION_STAGE, CHAIN_STAGE, AUTHORIZE_STAGE, type Hooks } from './hooks.js';
export { definePlugin, definePreset, type SkiffPlugin, type SkiffPreset, type PluginSpec, type PluginDefinition, type PluginOptions } from './plugin.js';
export { packageInfo, type PackageInfo } from './package-info.js';
export { checkOptions, type OptionsSchema, type OptionsOf } from './options.js';
export type { Components, ComponentName, ApiServerInfo, AdminCredential } from './components.js';
export { loadConfig, checkConfig, defineConfig, CONFIG_DEFAULTS, type SkiffConfig, type ResolvedConfig } from './config.js';
export { createCluster, type BootOptions } from './boot.js';
export { resolveModule } from './resolve.js';
export { KernelError, KERNEL_ERRORS, type KernelErrorCode } from './errors.js';
export { codedError, formatMessage } from './coded-error.js';
export { waitFor, type WaitForOptions } from './wait.js';
export { mkdirExact, writeFileAtomically } from './atomic-file.js';
export { hostAddress } from './host-address.js';
export {
  KernelThreads,
  MAX_API_SERVER_WORKERS,
  PortCalls,
  answerCalls,
  type PortAnswer,
  type ThreadOptions,
  type WorkerEntry,
  type WorkerKernelFactory,
} from './threads.js';
export {
  addMetricsSource,
  counter,
  createMetricsRegistry,
  exponentialBuckets,
  gatherMetrics,
  gauge,
  histogram,
  METRICS_CONTENT_TYPE,
  Counter,
  Gauge,
  Histogram,
  Registry,
  seriesCounter,
  seriesHistogram,
  SeriesCounter,
  SeriesHistogram,
  CounterSeries,
  HistogramSeries,
  type MetricsSnapshot,
  type MetricsSource,
} from './metrics.js';
export { recordingLogger, type LogRecord } from './recording-logger.js';
export { PluginFailure, isPluginFailure, pluginInCharge, skipFailingTaps, type PluginInCharge } from './tap-errors.js';
export { Registrations, type RegistrationsOptions } from './registrations.js';
export { authenticateBearerToken, type TokenAuthentication } from './bearer-token.js';
export * from './types/transport.js';
export * from './types/apiserver.js';
export * from './types/client.js';
export * from './types/controllers.js';
export * from './types/scheduler.js';
export * from './types/kubelet.js';
export * from './types/logger.js';
export { Tracer, TRACE_DEFAULTS, type TraceOptions, type ArmFilter, type RequestToTrace, type TraceSummary, type TracerStatus } from './tracing/tracer.js';
export {
  currentTrace,
  runInTrace,
  withSpan,
  recordSpan,
  traceParentOf,
  tracingActive,
  noteWrite,
  linkedWrite,
  markEvent,
  traceOfEvent,
  recordForeignSpans,
  joinRemoteTrace,
  attribute as spanAttribute,
  type TraceContext,
  type OpenTrace,
  type SpanStart,
  type LiveSpan,
} from './tracing/context.js';
export { TraceBuffer } from './tracing/buffer.js';
export { parseTraceParent, formatTraceParent, type TraceParent } from './tracing/traceparent.js';
export { jsonDiff, summarizeDiff, type DiffOp } from './tracing/diff.js';
export { now as spanClock, type Span, type SpanKind, type SpanAttributes } from './tracing/span.js';
