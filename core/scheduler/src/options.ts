import type { OptionsOf, OptionsSchema } from '@skiff/kernel';
import { DEFAULT_SCHEDULER_NAME } from './names.js';

export const schedulerOptionsSchema = {
  type: 'object',
  properties: {
    schedulerName: { type: 'string', default: DEFAULT_SCHEDULER_NAME, description: 'pods with this spec.schedulerName are ours' },
    profiles: {
      type: 'object',
      description: 'filter and score plugins to run (default: all registered, weight defaultWeight ?? 1)',
      properties: {
        filter: { type: 'array', items: { type: 'string' } },
        score: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, weight: { type: 'number', minimum: 0 } },
            required: ['name', 'weight'],
          },
        },
      },
    },
  },
} as const satisfies OptionsSchema;

export type SchedulerPluginOptions = OptionsOf<typeof schedulerOptionsSchema>;
