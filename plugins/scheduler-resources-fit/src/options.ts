import { labelKeyErrors } from '@skiff/api';
import { checkOptions, type OptionsOf, type OptionsSchema } from '@skiff/kernel';
import { ResourcesFitError } from './errors.js';
import { LEAST_ALLOCATED, MAX_CUSTOM_PRIORITY_SCORE, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO } from './names.js';

/** One scored resource and its weight (upstream's ResourceSpec); a weight of 0 means the default, 1. */
const resourceSpecSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'cpu, memory, ephemeral-storage, or an extended resource name' },
    weight: { type: 'integer', default: 1, description: 'weight of this resource in the node score, (0, 100]' },
  },
  required: ['name'],
} as const satisfies OptionsSchema;

/** Kubernetes' NodeResourcesFitArgs: both the package's options and a profile's `pluginConfig` args. */
export const optionsSchema = {
  type: 'object',
  properties: {
    ignoredResources: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'extended resources the filter does not check',
    },
    ignoredResourceGroups: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'extended resource groups the filter does not check: `example.com` ignores every `example.com/<name>`',
    },
    scoringStrategy: {
      type: 'object',
      description: 'how the score ranks the nodes that fit',
      properties: {
        type: {
          type: 'string',
          enum: [LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO],
          default: LEAST_ALLOCATED,
          description: 'LeastAllocated spreads pods, MostAllocated packs them, RequestedToCapacityRatio follows `shape`',
        },
        resources: {
          type: 'array',
          items: resourceSpecSchema,
          default: [
            { name: 'cpu', weight: 1 },
            { name: 'memory', weight: 1 },
          ],
          description: 'the resources scored and their weights (empty: cpu and memory, weight 1)',
        },
        requestedToCapacityRatio: {
          type: 'object',
          properties: {
            shape: {
              type: 'array',
              default: [],
              description: 'points (utilization 0..100, score 0..10) of a piecewise linear function of a resource’s utilization',
              items: {
                type: 'object',
                properties: { utilization: { type: 'integer' }, score: { type: 'integer' } },
                required: ['utilization', 'score'],
              },
            },
          },
        },
      },
    },
  },
} as const satisfies OptionsSchema;

export type ResourcesFitOptions = OptionsOf<typeof optionsSchema>;
export type ScoringStrategyType = ResourcesFitOptions['scoringStrategy']['type'];
export interface ResourceSpec {
  name: string;
  weight: number;
}
export interface ShapePoint {
  utilization: number;
  score: number;
}

const DEFAULT_RESOURCES: readonly ResourceSpec[] = [
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
];

/** Upstream's defaulting: no resources means cpu and memory; a weight of 0 means 1. */
function defaulted(args: ResourcesFitOptions): ResourcesFitOptions {
  const strategy = args.scoringStrategy;
  const resources = strategy.resources.length === 0 ? DEFAULT_RESOURCES : strategy.resources;
  return {
    ...{},
    ...args,
    scoringStrategy: { ...{}, ...strategy, resources: resources.map(({ name, weight }) => ({ name, weight: weight === 0 ? 1 : weight })) },
  };
}

function shapeProblems(shape: readonly ShapePoint[], path: string): string[] {
  if (shape.length === 0) return [`${path}: Required value: at least one point must be specified`];
  const problems: string[] = [];
  const unsorted = shape.findIndex((point, i) => i > 0 && shape[i - 1]!.utilization >= point.utilization);
  if (unsorted > 0) {
    problems.push(`${path}[${unsorted}].utilization: Invalid value: ${shape[unsorted]!.utilization}: utilization values must be sorted in increasing order`);
  }
  shape.forEach((point, i) => {
    if (point.utilization < 0 || point.utilization > 100) {
      problems.push(`${path}[${i}].utilization: Invalid value: ${point.utilization}: not in valid range [0, 100]`);
    }
    if (point.score < 0 || point.score > MAX_CUSTOM_PRIORITY_SCORE) {
      problems.push(`${path}[${i}].score: Invalid value: ${point.score}: not in valid range [0, ${MAX_CUSTOM_PRIORITY_SCORE}]`);
    }
  });
  return problems;
}

/** The checks upstream's ValidateNodeResourcesFitArgs makes beyond types, in its words; empty when valid. */
function argsProblems(args: ResourcesFitOptions): string[] {
  const problems: string[] = [];
  args.ignoredResources.forEach((name, i) => {
    for (const problem of labelKeyErrors(name)) problems.push(`ignoredResources[${i}]: Invalid value: ${JSON.stringify(name)}: ${problem}`);
  });
  args.ignoredResourceGroups.forEach((group, i) => {
    const at = `ignoredResourceGroups[${i}]`;
    if (group.includes('/')) problems.push(`${at}: Invalid value: ${JSON.stringify(group)}: resource group name can't contain '/'`);
    for (const problem of labelKeyErrors(group)) problems.push(`${at}: Invalid value: ${JSON.stringify(group)}: ${problem}`);
  });
  const strategy = args.scoringStrategy;
  strategy.resources.forEach(({ name, weight }, i) => {
    if (weight <= 0 || weight > 100) {
      problems.push(`scoringStrategy.resources[${i}].weight: Invalid value: ${weight}: resource weight of ${name} not in valid range (0, 100]`);
    }
  });
  const shape = strategy.requestedToCapacityRatio.shape;
  if (strategy.type === REQUESTED_TO_CAPACITY_RATIO || shape.length > 0) problems.push(...shapeProblems(shape, 'scoringStrategy.shape'));
  return problems;
}

/** Checks and defaults args (types, then upstream's rules); a wrong one throws naming the field, as kube-scheduler refuses to start. */
export function checkArgs(args: unknown, path = 'args'): ResourcesFitOptions {
  const checked = defaulted(checkOptions(optionsSchema, args, path) as ResourcesFitOptions);
  const problems = argsProblems(checked);
  if (problems.length > 0) throw new ResourcesFitError('SKIFF_ERR_NODE_RESOURCES_FIT_ARGS', { detail: problems.join('; ') });
  return checked;
}
