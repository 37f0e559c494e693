import { defineConfig } from 'vitest/config';

// A whole test cluster starts in a few seconds; give its hooks and tests room.
export default defineConfig({
  test: { include: ['src/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 30_000 },
});
