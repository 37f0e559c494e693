import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

export const optionsSchema = {
  type: 'object',
  properties: {
    ignoredResources: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: "extended resources the filter does not check (Kubernetes' NodeResourcesFitArgs.ignoredResources)",
    },
  },
} as const satisfies OptionsSchema;

export type ResourcesFitOptions = OptionsOf<typeof optionsSchema>;
