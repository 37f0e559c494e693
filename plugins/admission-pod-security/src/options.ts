import { isDNS1123Label, isDNS1123Subdomain } from '@skiff/api/validation';
import { KernelError } from '@skiff/kernel';
import { LEVELS, MODES, parseVersion, VERSION_PATTERN, type Level, type Policy } from './policy.js';
import { PLUGIN_NAME } from './names.js';

const level = (mode: string) =>
  ({ type: 'string', enum: LEVELS, default: 'privileged', description: `the ${mode} level of namespaces without a ${mode} label` }) as const;
const version = (mode: string) =>
  ({
    type: 'string',
    pattern: VERSION_PATTERN,
    default: 'latest',
    description: `the ${mode} version ("latest" or "v1.x") of namespaces without a ${mode}-version label`,
  }) as const;
const names = (what: string) => ({ type: 'array', items: { type: 'string' }, default: [], description: what }) as const;

/** PodSecurityConfiguration's shape (pod-security.admission.config.k8s.io/v1), as plugin options. */
export const OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string', enum: ['pod-security.admission.config.k8s.io/v1'], description: 'optional, for a configuration pasted from kube-apiserver' },
    kind: { type: 'string', enum: ['PodSecurityConfiguration'], description: 'optional, for a configuration pasted from kube-apiserver' },
    defaults: {
      type: 'object',
      description: 'the policy of namespaces that carry no pod-security.kubernetes.io labels',
      properties: {
        enforce: level('enforce'),
        'enforce-version': version('enforce'),
        audit: level('audit'),
        'audit-version': version('audit'),
        warn: level('warn'),
        'warn-version': version('warn'),
      },
    },
    exemptions: {
      type: 'object',
      description: 'requests the policy never looks at',
      properties: {
        usernames: names('authenticated users whose pods and workloads are not checked'),
        runtimeClasses: names('pods (and templates) with one of these runtimeClassName are not checked'),
        namespaces: names('namespaces whose pods and workloads are not checked'),
      },
    },
  },
} as const;

export interface Exemptions {
  usernames: ReadonlySet<string>;
  runtimeClasses: ReadonlySet<string>;
  namespaces: ReadonlySet<string>;
}

export interface PodSecurityConfig {
  defaults: Policy;
  exemptions: Exemptions;
}

interface CheckedOptions {
  defaults: Record<'enforce' | 'audit' | 'warn', Level> & Record<'enforce-version' | 'audit-version' | 'warn-version', string>;
  exemptions: { usernames: string[]; runtimeClasses: string[]; namespaces: string[] };
}

/** The options as the admission code uses them; names that could never match and duplicates stop the start. */
export function configFromOptions(options: CheckedOptions): PodSecurityConfig {
  const { exemptions } = options;
  const fail = (detail: string): never => {
    throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail });
  };
  const distinct = (field: keyof CheckedOptions['exemptions'], validate?: (value: string) => string[]) => {
    const seen = new Set<string>();
    exemptions[field].forEach((value, i) => {
      const problems = validate?.(value) ?? (value ? [] : ['must not be empty']);
      if (problems.length) fail(`option "exemptions.${field}[${i}]" ${JSON.stringify(value)} is invalid: ${problems.join(', ')}`);
      if (seen.has(value)) fail(`option "exemptions.${field}[${i}]" ${JSON.stringify(value)} is listed twice`);
      seen.add(value);
    });
    return seen;
  };
  const defaults = Object.fromEntries(
    MODES.map((mode) => [mode, { level: options.defaults[mode], version: parseVersion(options.defaults[`${mode}-version`]) ?? 'latest' }]),
  ) as unknown as Policy;
  return {
    defaults,
    exemptions: {
      usernames: distinct('usernames'),
      runtimeClasses: distinct('runtimeClasses', isDNS1123Subdomain),
      namespaces: distinct('namespaces', isDNS1123Label),
    },
  };
}
