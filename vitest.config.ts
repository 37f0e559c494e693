import { defineConfig } from 'vitest/config';

// Unit tests import workspace packages from source (the "source" export condition), so they run
// without a build. Integration tests drive the built `skiff` CLI with the real kubectl.
export default defineConfig({
  test: {
    projects: [
      {
        resolve: { conditions: ['source'] },
        ssr: { resolve: { conditions: ['source'] } },
        test: {
          name: 'unit',
          include: ['core/*/src/**/*.test.ts', 'plugins/*/src/**/*.test.ts', 'presets/*/src/**/*.test.ts', 'docs/examples/*/src/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['integration-tests/**/*.test.ts'],
          setupFiles: ['integration-tests/setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
