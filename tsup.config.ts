import { defineConfig } from 'tsup';

// One build shape for every package: ESM, type declarations, Node 20 target.
// A package with extra entry points (a CLI bin) passes them with --entry.
// The source maps name ../src/*.ts: every package's `files` ships src (tests excluded), so they resolve
// from the tarball too (docs/releasing.md, checked by scripts/check-publish.mjs).
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  splitting: false,
});
