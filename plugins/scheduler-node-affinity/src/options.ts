import { nodeSelectorErrors, preferredSchedulingTermsErrors, type NodeSelector, type PreferredSchedulingTerm } from '@skiff/api';
import { checkOptions, type OptionsSchema } from '@skiff/kernel';
import { NodeAffinityError } from './errors.js';

const requirementSchema = {
  type: 'object',
  properties: {
    key: { type: 'string' },
    operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] },
    values: { type: 'array', items: { type: 'string' } },
  },
  required: ['key', 'operator'],
} as const satisfies OptionsSchema;

const termSchema = {
  type: 'object',
  properties: {
    matchExpressions: { type: 'array', items: requirementSchema, description: 'requirements on node labels' },
    matchFields: { type: 'array', items: requirementSchema, description: 'requirements on node fields (`metadata.name`)' },
  },
} as const satisfies OptionsSchema;

/** Kubernetes' NodeAffinityArgs: both the package's options and a profile's `pluginConfig` args. */
export const optionsSchema = {
  type: 'object',
  properties: {
    addedAffinity: {
      type: 'object',
      description: "node affinity every pod of the profile must also satisfy (required) or is ranked by (preferred), on top of the pod's own",
      properties: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          type: 'object',
          description: 'a NodeSelector: nodes outside it are rejected for every pod',
          properties: { nodeSelectorTerms: { type: 'array', items: termSchema } },
        },
        preferredDuringSchedulingIgnoredDuringExecution: {
          type: 'array',
          description: 'PreferredSchedulingTerms added to every pod’s score',
          items: { type: 'object', properties: { weight: { type: 'integer' }, preference: termSchema }, required: ['weight', 'preference'] },
        },
      },
    },
  },
} as const satisfies OptionsSchema;

/** The checked args: the profile's added required selector and preferred terms, when given. */
export interface NodeAffinityArgs {
  addedAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector;
    preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
  };
}

const REQUIRED_PATH = 'addedAffinity.requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED_PATH = 'addedAffinity.preferredDuringSchedulingIgnoredDuringExecution';

/**
 * Checks args (types, then upstream's ValidateNodeAffinityArgs: every term must parse); a wrong one throws
 * naming the field, as kube-scheduler refuses to start. A required selector without `nodeSelectorTerms` is none.
 */
export function checkArgs(args: unknown, path = 'args'): NodeAffinityArgs {
  const checked = checkOptions(optionsSchema, args, path) as { addedAffinity: Record<string, unknown> };
  const required = checked.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution as Partial<NodeSelector> | undefined;
  const preferred = checked.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution as PreferredSchedulingTerm[] | undefined;
  const addedAffinity: NodeAffinityArgs['addedAffinity'] = {};
  if (required?.nodeSelectorTerms) addedAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: required.nodeSelectorTerms };
  if (preferred && preferred.length > 0) addedAffinity.preferredDuringSchedulingIgnoredDuringExecution = preferred;
  const problems = [
    ...(addedAffinity.requiredDuringSchedulingIgnoredDuringExecution
      ? nodeSelectorErrors(addedAffinity.requiredDuringSchedulingIgnoredDuringExecution, REQUIRED_PATH)
      : []),
    ...preferredSchedulingTermsErrors(addedAffinity.preferredDuringSchedulingIgnoredDuringExecution ?? [], PREFERRED_PATH),
  ];
  if (problems.length > 0) throw new NodeAffinityError('SKIFF_ERR_NODE_AFFINITY_ARGS', { detail: problems.join('; ') });
  return { addedAffinity };
}
