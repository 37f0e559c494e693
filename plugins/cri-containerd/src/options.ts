import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

export const optionsSchema = {
  type: 'object',
  properties: {
    socket: {
      type: 'string',
      description: "a running containerd's socket to use instead of starting one (its CRI plugin must be enabled)",
    },
    containerd: { type: 'string', default: 'containerd', description: 'the containerd binary started for each node' },
    sandboxImage: { type: 'string', default: 'skiff.local/pause:3.10', description: 'the pause image every pod sandbox runs' },
    buildSandboxImage: {
      type: 'boolean',
      default: true,
      description: "when the sandbox image is not on the node, build it from the host's static busybox (no registry serves one here)",
    },
    imports: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'image archives (OCI or docker-archive) imported into each node at start, such as the pause image',
    },
    plainHttpRegistries: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'registries (host:port) pulled from over plain HTTP, as containerd allows for local ones',
    },
    startTimeoutSeconds: { type: 'number', minimum: 1, default: 20, description: 'how long to wait for containerd to answer' },
    logLevel: {
      type: 'string',
      enum: ['debug', 'info', 'warn', 'error'],
      default: 'warn',
      description: "containerd's own log level (its log is <node data dir>/containerd/containerd.log)",
    },
  },
} as const satisfies OptionsSchema;

export type ContainerdRuntimeOptions = OptionsOf<typeof optionsSchema>;
