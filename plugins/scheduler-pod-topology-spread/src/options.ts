import { labelKeyErrors } from '@skiff/api';
import { checkOptions, type OptionsOf, type OptionsSchema } from '@skiff/kernel';
import { PodTopologySpreadError } from './errors.js';

const inclusionPolicy = { type: 'string', enum: ['Honor', 'Ignore'] } as const;

/** One cluster default constraint: a TopologySpreadConstraint without a selector (it is deduced per pod). */
const defaultConstraintSchema = {
  type: 'object',
  properties: {
    maxSkew: { type: 'integer' },
    topologyKey: { type: 'string' },
    whenUnsatisfiable: { type: 'string' },
    minDomains: { type: 'integer', minimum: 1 },
    nodeAffinityPolicy: inclusionPolicy,
    nodeTaintsPolicy: inclusionPolicy,
    matchLabelKeys: { type: 'array', items: { type: 'string' } },
  },
  required: ['maxSkew', 'topologyKey', 'whenUnsatisfiable'],
} as const satisfies OptionsSchema;

/** Kubernetes' PodTopologySpreadArgs: both the package's options and a profile's `pluginConfig` args. */
export const optionsSchema = {
  type: 'object',
  properties: {
    defaultConstraints: {
      type: 'array',
      items: defaultConstraintSchema,
      description: 'constraints for pods that set none, with `defaultingType: List` (the selector comes from their Service / controller)',
    },
    defaultingType: {
      type: 'string',
      enum: ['System', 'List'],
      default: 'System',
      description: 'System: hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway; List: `defaultConstraints`',
    },
  },
} as const satisfies OptionsSchema;

export type PodTopologySpreadOptions = OptionsOf<typeof optionsSchema>;

/** Default constraints that carry a selector (not part of the schema: checkOptions would fill an absent object in). */
function selectorProblems(args: unknown): string[] {
  const constraints = (args as { defaultConstraints?: unknown } | undefined)?.defaultConstraints;
  if (!Array.isArray(constraints)) return [];
  return constraints.flatMap((c: unknown, i) =>
    typeof c === 'object' && c !== null && 'labelSelector' in c
      ? [`defaultConstraints[${i}].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod`]
      : [],
  );
}

/** The checks upstream's ValidatePodTopologySpreadArgs makes beyond types, in its words; empty when valid. */
function argsProblems(args: PodTopologySpreadOptions): string[] {
  const problems: string[] = [];
  const constraints = args.defaultConstraints ?? [];
  if (args.defaultingType === 'System' && constraints.length > 0) {
    problems.push('defaultingType: Invalid value: "System": when .defaultConstraints are not empty');
  }
  constraints.forEach((c, i) => {
    const at = `defaultConstraints[${i}]`;
    if (c.maxSkew <= 0) problems.push(`${at}.maxSkew: Invalid value: ${c.maxSkew}: not in valid range (0, inf)`);
    if (c.topologyKey === '') problems.push(`${at}.topologyKey: Required value: can not be empty`);
    else for (const problem of labelKeyErrors(c.topologyKey)) problems.push(`${at}.topologyKey: Invalid value: ${JSON.stringify(c.topologyKey)}: ${problem}`);
    if (c.whenUnsatisfiable === '') problems.push(`${at}.whenUnsatisfiable: Required value: can not be empty`);
    else if (c.whenUnsatisfiable !== 'DoNotSchedule' && c.whenUnsatisfiable !== 'ScheduleAnyway') {
      problems.push(`${at}.whenUnsatisfiable: Unsupported value: ${JSON.stringify(c.whenUnsatisfiable)}: supported values: "DoNotSchedule", "ScheduleAnyway"`);
    }
    if (constraints.slice(0, i).some((other) => other.topologyKey === c.topologyKey && other.whenUnsatisfiable === c.whenUnsatisfiable)) {
      problems.push(`defaultConstraints[${i}]: Duplicate value: "{${c.topologyKey}, ${c.whenUnsatisfiable}}"`);
    }
  });
  return problems;
}

/** Checks args (types, then upstream's rules); a wrong one throws naming the field, as kube-scheduler refuses to start. */
export function checkArgs(args: unknown, path = 'args'): PodTopologySpreadOptions {
  const forbidden = selectorProblems(args);
  if (forbidden.length > 0) throw new PodTopologySpreadError('SKIFF_ERR_POD_TOPOLOGY_SPREAD_ARGS', { detail: forbidden.join('; ') });
  const checked = checkOptions(optionsSchema, args, path) as PodTopologySpreadOptions;
  const problems = argsProblems(checked);
  if (problems.length > 0) throw new PodTopologySpreadError('SKIFF_ERR_POD_TOPOLOGY_SPREAD_ARGS', { detail: problems.join('; ') });
  return checked;
}
