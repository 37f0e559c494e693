import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

export const optionsSchema = {
  type: 'object',
  properties: {
    startDelayMs: { type: 'integer', minimum: 0, default: 0, description: 'how long StartContainer takes' },
    pullDelayMs: { type: 'integer', minimum: 0, default: 0, description: 'how long PullImage takes' },
    runMs: {
      type: 'integer',
      minimum: 0,
      default: 1000,
      description: 'how long containers of pods with restartPolicy Never or OnFailure run before they exit (pod annotation skiff.io/simulate-run-ms overrides)',
    },
    failImages: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'images whose pulls fail with ErrImagePull (as if the registry did not have them); matched by normalized name',
    },
  },
} as const satisfies OptionsSchema;

export type SimulatedRuntimeOptions = OptionsOf<typeof optionsSchema>;
