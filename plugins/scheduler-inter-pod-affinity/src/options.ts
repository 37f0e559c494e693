import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

/** Kubernetes' InterPodAffinityArgs: the plugin's options and a profile's `pluginConfig` args alike. */
export const optionsSchema = {
  type: 'object',
  properties: {
    hardPodAffinityWeight: {
      type: 'integer',
      minimum: 0,
      maximum: 100,
      default: 1,
      description: "score weight of an existing pod's required affinity term the incoming pod matches (0 turns it off)",
    },
    ignorePreferredTermsOfExistingPods: {
      type: 'boolean',
      default: false,
      description: "score only the incoming pod's preferred terms; skip scoring when it has none",
    },
  },
} as const satisfies OptionsSchema;

export type InterPodAffinityArgs = OptionsOf<typeof optionsSchema>;
