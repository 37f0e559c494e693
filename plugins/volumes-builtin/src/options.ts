import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

export const optionsSchema = {
  type: 'object',
  properties: {
    tmpfs: {
      type: 'boolean',
      default: true,
      description: 'mount a tmpfs for emptyDir volumes with medium Memory when the kubelet runs as root',
    },
    secretsOnTmpfs: {
      type: 'boolean',
      default: false,
      description: 'mount a tmpfs for secret and projected volumes when the kubelet runs as root, as Kubernetes does (every pod has a projected token volume)',
    },
  },
} as const satisfies OptionsSchema;

export type VolumesBuiltinOptions = OptionsOf<typeof optionsSchema>;
