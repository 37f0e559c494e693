import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

export const metricsServerOptionsSchema = {
  type: 'object',
  properties: {
    metricResolutionSeconds: {
      type: 'number',
      minimum: 0,
      default: 15,
      description: "how long a node's usage, once read from its kubelet, answers requests before it is read again (upstream's --metric-resolution)",
    },
    kubeletTimeoutSeconds: {
      type: 'number',
      minimum: 0.1,
      default: 10,
      description: "how long reading a node's usage from its kubelet may take; a node that does not answer shows no metrics",
    },
  },
  additionalProperties: false,
} as const satisfies OptionsSchema;

export type MetricsServerOptions = OptionsOf<typeof metricsServerOptionsSchema>;
