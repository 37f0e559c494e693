import { checkOptions, type OptionsOf, type OptionsSchema } from '@skiff/kernel';
import { DefaultPreemptionError } from './errors.js';

/** Kubernetes' DefaultPreemptionArgs: both the package's options and a profile's `pluginConfig` args. */
export const optionsSchema = {
  type: 'object',
  properties: {
    minCandidateNodesPercentage: {
      type: 'integer',
      default: 10,
      description: 'at least this percentage of the nodes where preemption might help are dry-run, [0, 100]',
    },
    minCandidateNodesAbsolute: {
      type: 'integer',
      default: 100,
      description: 'at least this many nodes are dry-run (or all of them, when fewer), [0, ∞)',
    },
  },
} as const satisfies OptionsSchema;

/** DefaultPreemptionArgs, defaulted. */
export type DefaultPreemptionOptions = OptionsOf<typeof optionsSchema>;

/** The checks upstream's ValidateDefaultPreemptionArgs makes, in its words; empty when valid. */
function argsProblems({ minCandidateNodesPercentage: percentage, minCandidateNodesAbsolute: absolute }: DefaultPreemptionOptions): string[] {
  const problems: string[] = [];
  if (percentage < 0 || percentage > 100) problems.push(`minCandidateNodesPercentage: Invalid value: ${percentage}: not in valid range [0, 100]`);
  if (absolute < 0) problems.push(`minCandidateNodesAbsolute: Invalid value: ${absolute}: not in valid range [0, inf)`);
  if (percentage === 0 && absolute === 0) {
    problems.push('minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute');
    problems.push('minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage');
  }
  return problems;
}

/** Checks and defaults args; a wrong one throws naming the field, as kube-scheduler refuses to start. */
export function checkArgs(args: unknown, path = 'args'): DefaultPreemptionOptions {
  const checked = checkOptions(optionsSchema, args, path) as DefaultPreemptionOptions;
  const problems = argsProblems(checked);
  if (problems.length > 0) throw new DefaultPreemptionError('SKIFF_ERR_DEFAULT_PREEMPTION_ARGS', { detail: problems.join('; ') });
  return checked;
}
