import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kubectl, REPO_ROOT, startSkiff, takeServerCrashes, tempDir } from './harness.js';

const FIXTURE = 'skiff-plugin-forgotten-promise';
const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('a bug that leaves a promise rejection unhandled in the server', () => {
  it('ends `skiff up` with exit code 70, one line saying so and the stack, and the integration tests notice', async () => {
    const dir = tempDir('internal-errors');
    made.push(dir);
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(join(REPO_ROOT, 'integration-tests/fixtures', FIXTURE), join(dir, 'node_modules', FIXTURE));
    writeFileSync(join(dir, 'skiff.config.mjs'), `export default { plugins: ['${FIXTURE}'] };\n`);
    const skiff = await startSkiff([], { cwd: dir });
    const kubectl = new Kubectl(skiff.kubeconfig);
    try {
      // The request itself succeeds: the plugin does not wait for what fails.
      expect(await kubectl.ok('create', 'configmap', 'fine')).toBe('configmap/fine created\n');
      // 'close': it has exited and its output is complete.
      const closed = new Promise<number | null>((resolve) => skiff.process.once('close', resolve));
      await kubectl.ok('create', 'configmap', 'forget-me');
      expect(await closed).toBe(70);
      expect(skiff.stderr()).toMatch(/^skiff: internal error \(unhandled promise rejection\), exiting: the notifier is down \(ConfigMap forget-me\)$/m);
      expect(skiff.stderr()).toContain(join('fixtures', FIXTURE, 'index.js'));
      // The guard in setup.ts would fail this test with it; here it is expected, so the test takes it.
      const crashes = takeServerCrashes();
      expect(crashes).toHaveLength(1);
      expect(crashes[0]).toContain('exit code 70');
    } finally {
      await skiff.stop();
      kubectl.cleanup();
    }
  });
});
