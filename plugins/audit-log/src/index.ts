import { isAbsolute, join, resolve } from 'node:path';
import { definePlugin, KernelError, LIFECYCLE_STAGE, packageInfo, type AuditEvent } from '@skiff/kernel';
import { DEFAULT_POLICY, parsePolicy, PolicyError, readPolicyFile, ruleFor, type Policy } from './policy.js';
import { LogFile } from './writer.js';

export const PLUGIN_NAME = '@skiff/plugin-audit-log';
export { DEFAULT_POLICY, parsePolicy, ruleFor, type Policy, type PolicyRule, type AuditLevel } from './policy.js';

const MIB = 1024 * 1024;

/**
 * The audit log: every request's audit events, as audit.k8s.io/v1 Event objects in JSON lines, at the level an
 * audit Policy gives them (None, Metadata, Request, RequestResponse), like kube-apiserver's `--audit-log-path`
 * with `--audit-policy-file`. The default policy records the metadata of every request once it is answered.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'The log file, relative to the project root (default: <dataDir>/audit.log)' },
      policyFile: { type: 'string', description: 'An audit Policy (audit.k8s.io/v1) file, YAML or JSON, relative to the project root' },
      policy: { type: 'object', additionalProperties: true, description: 'The same Policy inline (default: Metadata for every request, at ResponseComplete)' },
      maxSizeMB: { type: 'integer', minimum: 0, default: 100, description: 'Rotate the file at this size; 0 never rotates' },
      maxBackups: { type: 'integer', minimum: 0, default: 5, description: 'Rotated files to keep' },
    },
  },
  apply(kernel, options) {
    const fail = (detail: string) => new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail });
    // The options checker fills an object option it was not given with {}: an empty policy is no policy.
    const inlinePolicy = options.policy && Object.keys(options.policy).length > 0 ? options.policy : undefined;
    if (inlinePolicy && options.policyFile) throw fail('give policy or policyFile, not both');
    let policy: Policy = DEFAULT_POLICY;
    let file: LogFile | undefined;
    try {
      if (inlinePolicy) policy = parsePolicy(inlinePolicy);
    } catch (err) {
      if (err instanceof PolicyError) throw fail(err.message);
      throw err;
    }
    const fromRoot = (path: string) => (isAbsolute(path) ? path : resolve(kernel.config.rootDir, path));

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.STORE, {
      start: async () => {
        try {
          if (options.policyFile) policy = readPolicyFile(fromRoot(options.policyFile));
        } catch (err) {
          if (err instanceof PolicyError) throw fail(err.message);
          throw err;
        }
        const logger = kernel.logger.child({ component: PLUGIN_NAME });
        file = new LogFile({
          path: options.path ? fromRoot(options.path) : join(fromRoot(kernel.config.dataDir), 'audit.log'),
          maxBytes: options.maxSizeMB * MIB,
          maxBackups: options.maxBackups,
          onError: (err) => logger.error({ err }, 'audit events could not be written'),
        });
      },
      stop: async () => {
        file?.close();
        file = undefined;
      },
    });

    kernel.hooks.audit.tap(PLUGIN_NAME, (event) => {
      if (!file) return;
      const line = auditLine(policy, event);
      if (line) file.append(line);
    });
  },
});

/** The JSON line for `event` under `policy`, or undefined when the policy leaves it out. */
export function auditLine(policy: Policy, event: AuditEvent): string | undefined {
  const path = event.requestURI.split('?')[0]!;
  const rule = ruleFor(policy, event, path);
  if (!rule || rule.level === 'None') return undefined;
  if (policy.omitStages?.includes(event.stage) || rule.omitStages?.includes(event.stage)) return undefined;
  const omitManagedFields = rule.omitManagedFields ?? policy.omitManagedFields ?? false;
  const withBodies = rule.level === 'Request' || rule.level === 'RequestResponse';
  const record = {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: rule.level,
    auditID: event.auditID,
    stage: event.stage,
    requestURI: event.requestURI,
    verb: event.verb,
    user: event.user ?? {},
    ...(event.impersonatedUser ? { impersonatedUser: event.impersonatedUser } : {}),
    sourceIPs: event.sourceIPs,
    ...(event.userAgent ? { userAgent: event.userAgent } : {}),
    ...(event.objectRef ? { objectRef: event.objectRef } : {}),
    ...(event.responseStatus ? { responseStatus: event.responseStatus } : {}),
    ...(withBodies && event.requestObject ? { requestObject: body(event.requestObject, omitManagedFields) } : {}),
    ...(rule.level === 'RequestResponse' && event.responseObject !== undefined ? { responseObject: body(event.responseObject, omitManagedFields) } : {}),
    requestReceivedTimestamp: event.requestReceivedTimestamp,
    stageTimestamp: event.stageTimestamp,
    ...(event.annotations ? { annotations: event.annotations } : {}),
  };
  return JSON.stringify(record);
}

function body(value: unknown, omitManagedFields: boolean): unknown {
  if (!omitManagedFields || typeof value !== 'object' || value === null) return value;
  const metadata = (value as { metadata?: { managedFields?: unknown } }).metadata;
  if (!metadata?.managedFields) return value;
  const { managedFields: _dropped, ...rest } = metadata;
  return { ...{}, ...value, metadata: rest };
}
