import { defineConfig } from 'tsup';

// ESM with type declarations for Node 20, the shape a Skiff cluster loads. No source maps: they would
// point at src/, which the package does not ship.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  target: 'node20',
  platform: 'node',
});
