import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kubectl, REPO_ROOT, runSkiffExpectingFailure, startSkiff, tempDir } from './harness.js';

const FIXTURE = 'skiff-plugin-deny-latest';

/** A user's project folder with the fixture plugin installed as a local package, and a config naming it. */
function project(config: string): string {
  const dir = tempDir('plugin-failures');
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(join(REPO_ROOT, 'integration-tests/fixtures', FIXTURE), join(dir, 'node_modules', FIXTURE));
  writeFileSync(join(dir, 'skiff.config.mjs'), config);
  return dir;
}

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The structured log lines skiff wrote to stderr. */
function logLines(stderr: string): Record<string, any>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

describe('a third-party plugin that fails', () => {
  it('in an admission tap: kubectl shows a 500 naming the admission plugin; the log has the stack', async () => {
    const dir = project(`export default { plugins: ['${FIXTURE}'] };\n`);
    made.push(dir);
    const skiff = await startSkiff([], { cwd: dir });
    const kubectl = new Kubectl(skiff.kubeconfig);
    try {
      const crashed = await kubectl.run(['run', 'web', '--image=nginx:1.27']);
      expect(crashed.code).toBe(1);
      expect(crashed.stderr.trim()).toBe(
        `Error from server (InternalError): Internal error occurred: admission plugin "deny-latest" failed: Cannot read properties of undefined (reading 'spec')`,
      );

      // Its deliberate rejections still read as the plugin wrote them.
      const denied = await kubectl.run(['create', 'deployment', 'web', '--image=nginx:latest']);
      expect(denied.code).toBe(1);
      expect(denied.stderr.trim()).toBe('error: failed to create deployment: deployments.apps "web" is forbidden: image "nginx:latest" uses the latest tag');

      const logged = logLines(skiff.stderr()).find((line) => line.hook === 'validate');
      expect(logged).toMatchObject({
        level: 50,
        plugin: FIXTURE,
        tap: 'deny-latest',
        hook: 'validate',
        method: 'POST',
        path: '/api/v1/namespaces/default/pods',
        msg: `plugin "${FIXTURE}" failed in validate (tap "deny-latest"): Cannot read properties of undefined (reading 'spec')`,
      });
      expect(logged!.err.stack).toContain(join('fixtures', FIXTURE, 'index.js'));
    } finally {
      expect(await skiff.stop()).toBe(0);
      kubectl.cleanup();
    }
  });

  it('in apply: the start fails with one line naming the plugin', async () => {
    const dir = project(`export default { plugins: [['${FIXTURE}', { hook: 'admission' }]] };\n`);
    made.push(dir);
    const result = await runSkiffExpectingFailure([], dir);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`skiff: plugin "${FIXTURE}" failed in apply: Cannot read properties of undefined (reading 'tapPromise')`);
  });
});
