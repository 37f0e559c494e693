import type { OptionsSchema } from '@skiff/kernel';
import type { ProfileConfig } from './framework/profile.js';
import { DEFAULT_SCHEDULER_NAME } from './names.js';

export interface SchedulerPluginOptions {
  /** Pods whose spec.schedulerName is this are scheduled here. */
  schedulerName: string;
  /** Which filter and score plugins run, and score weights. Default: every registered plugin. */
  profiles?: ProfileConfig;
}

export const schedulerOptionsSchema: OptionsSchema = {
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
};
