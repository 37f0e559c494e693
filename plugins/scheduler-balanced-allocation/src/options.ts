import { checkOptions, type OptionsOf, type OptionsSchema } from '@skiff/kernel';
import { BalancedAllocationError } from './errors.js';

/** Kubernetes' NodeResourcesBalancedAllocationArgs: both the package's options and a profile's `pluginConfig` args. */
export const optionsSchema = {
  type: 'object',
  properties: {
    resources: {
      type: 'array',
      description: 'the resources whose utilization should be balanced (empty: cpu and memory)',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'cpu, memory, ephemeral-storage, or an extended resource name' },
          weight: { type: 'integer', default: 1, description: 'must be 1 (0 means 1)' },
        },
        required: ['name'],
      },
      default: [
        { name: 'cpu', weight: 1 },
        { name: 'memory', weight: 1 },
      ],
    },
  },
} as const satisfies OptionsSchema;

export type BalancedAllocationOptions = OptionsOf<typeof optionsSchema>;

/** The checks upstream's ValidateNodeResourcesBalancedAllocationArgs makes, in its words; empty when valid. */
function argsProblems(args: BalancedAllocationOptions): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  args.resources.forEach(({ name, weight }, i) => {
    if (seen.has(name)) problems.push(`resources[${i}].name: Duplicate value: ${JSON.stringify(name)}`);
    seen.add(name);
    if (weight !== 1) problems.push(`resources[${i}].weight: Invalid value: ${weight}: must be 1`);
  });
  return problems;
}

/** Checks and defaults args (no resources: cpu and memory; a weight of 0 means 1); a wrong one throws naming the field. */
export function checkArgs(args: unknown, path = 'args'): BalancedAllocationOptions {
  const checked = checkOptions(optionsSchema, args, path) as BalancedAllocationOptions;
  const resources =
    checked.resources.length === 0
      ? [
          { name: 'cpu', weight: 1 },
          { name: 'memory', weight: 1 },
        ]
      : checked.resources.map(({ name, weight }) => ({ name, weight: weight === 0 ? 1 : weight }));
  const defaulted = { ...{}, ...checked, resources };
  const problems = argsProblems(defaulted);
  if (problems.length > 0) throw new BalancedAllocationError('SKIFF_ERR_BALANCED_ALLOCATION_ARGS', { detail: problems.join('; ') });
  return defaulted;
}
