import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

export interface ResourceWeight {
  /** cpu, memory, or an extended resource name. */
  name: string;
  weight: number;
}

export const DEFAULT_RESOURCES: readonly ResourceWeight[] = Object.freeze([
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
]);

export const optionsSchema = {
  type: 'object',
  properties: {
    resources: {
      type: 'array',
      description: 'resources to score and their weights',
      items: {
        type: 'object',
        properties: { name: { type: 'string', description: 'cpu, memory, or an extended resource name' }, weight: { type: 'number', minimum: 0 } },
        required: ['name', 'weight'],
      },
      default: DEFAULT_RESOURCES.map((resource) => ({ ...resource })),
    },
    weight: { type: 'number', minimum: 0, default: 1, description: 'the score weight when the profile names none' },
  },
} as const satisfies OptionsSchema;

export type LeastAllocatedOptions = OptionsOf<typeof optionsSchema>;
