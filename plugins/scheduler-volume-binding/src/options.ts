import type { OptionsOf, OptionsSchema } from '@skiff/kernel';
import { DEFAULT_BIND_TIMEOUT_SECONDS } from './names.js';

/** Kubernetes' VolumeBindingArgs: the plugin's options, and the `args` a profile's pluginConfig gives it. */
export const optionsSchema = {
  type: 'object',
  properties: {
    bindTimeoutSeconds: {
      type: 'integer',
      minimum: 0,
      default: DEFAULT_BIND_TIMEOUT_SECONDS,
      description: "how long preBind waits for the pod's claims to be bound or provisioned before the pod is retried",
    },
    shape: {
      type: 'array',
      items: {
        type: 'object',
        properties: { utilization: { type: 'integer' }, score: { type: 'integer' } },
        additionalProperties: false,
      },
      description: 'the VolumeCapacityPriority score shape; refused: that feature gate is off, as it is upstream by default',
    },
  },
} as const satisfies OptionsSchema;

export type VolumeBindingOptions = OptionsOf<typeof optionsSchema>;
