import { defineConfig } from 'vitest/config';

// Used by each package's own `npm test`: its src/**/*.test.ts, workspace packages from source.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: { include: ['src/**/*.test.ts'], testTimeout: 20_000 },
});
