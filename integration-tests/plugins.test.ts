import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_TIMEOUT, Kubectl, REPO_ROOT, runSkiffExpectingFailure, startSkiff, tempDir, waitFor, pods } from './harness.js';

/** A user's project folder with the guide's example plugin installed as a local package (npm install ../path links it). */
function project(config: string): string {
  const dir = tempDir('project');
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(join(REPO_ROOT, 'docs/examples/skiff-plugin-deny-label'), join(dir, 'node_modules/skiff-plugin-deny-label'));
  writeFileSync(join(dir, 'skiff.config.mjs'), config);
  return dir;
}

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('plugins from the cluster config', () => {
  it('loads a custom admission plugin by name and enforces it through kubectl', async () => {
    const dir = project(`export default {
  plugins: [['skiff-plugin-deny-label', { label: 'forbidden', message: 'pods labelled forbidden are not welcome' }]],
};\n`);
    made.push(dir);
    const skiff = await startSkiff([], { cwd: dir });
    const kubectl = new Kubectl(skiff.kubeconfig);
    try {
      const denied = await kubectl.run(['run', 'bad', '--image=nginx', '--labels=forbidden=yes']);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain('Error from server (Forbidden): pods "bad" is forbidden: pods labelled forbidden are not welcome');
      await kubectl.ok('run', 'good', '--image=nginx', '--labels=app=good');
      await waitFor('good Running', async () => (await pods(kubectl, 'app=good'))[0]?.phase === 'Running', CLUSTER_TIMEOUT);
      expect(await kubectl.run(['get', 'pod', 'bad'])).toMatchObject({ code: 1 });
    } finally {
      expect(await skiff.stop()).toBe(0);
      kubectl.cleanup();
    }
  });

  it('fails the start with one line naming a missing plugin', async () => {
    const dir = project(`export default { plugins: ['skiff-plugin-nope'] };\n`);
    made.push(dir);
    const result = await runSkiffExpectingFailure([], dir);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`skiff: plugin "skiff-plugin-nope" not found (is it installed? looked from ${dir})`);
  });

  it('fails the start with one line naming the plugin and the wrong option', async () => {
    const dir = project(`export default { plugins: [['skiff-plugin-deny-label', { label: 5 }]] };\n`);
    made.push(dir);
    const result = await runSkiffExpectingFailure([], dir);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('skiff: plugin "skiff-plugin-deny-label": option "label" must be a string (got 5)');
  });

  it('fails the start with one line for a config key that does not exist, suggesting the right one', async () => {
    const dir = project(`export default { plugin: ['skiff-plugin-deny-label'] };\n`);
    made.push(dir);
    const result = await runSkiffExpectingFailure([], dir);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `skiff: invalid config ${join(dir, 'skiff.config.mjs')}: unknown key "plugin" (did you mean "plugins"?); known keys: preset, plugins, dataDir, host, port, nodes, advertiseAddress, logLevel, apiServer, trace`,
    );
  });

  it('fails the start with one line when a removed plugin is not loaded', async () => {
    const dir = project(`export default { plugins: [['@skiff/plugin-authz-allways-allow', false]] };\n`);
    made.push(dir);
    const result = await runSkiffExpectingFailure([], dir);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `skiff: invalid config ${join(dir, 'skiff.config.mjs')}: cannot remove plugin "@skiff/plugin-authz-allways-allow": it is not loaded (did you mean "@skiff/plugin-authz-always-allow"?)`,
    );
  });

  it('refuses, in one line, a configuration whose only authorizer was removed (instead of hanging)', async () => {
    const dir = project(`export default { plugins: [['@skiff/plugin-authz-always-allow', false]] };\n`);
    made.push(dir);
    // The API server has started (and logged at info) by the time the controller manager asks.
    const result = await runSkiffExpectingFailure(['--log-level', 'error'], dir);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'skiff: component "@skiff/controller-manager" failed to start: the authorizers do not let system:kube-controller-manager create pods (selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "system:kube-controller-manager" cannot create resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope); the cluster cannot work without it: add an authorizer that allows it, such as @skiff/plugin-authz-always-allow',
    );
  });

  it('fails the start with one line for a bad flag', async () => {
    const dir = tempDir('flags');
    made.push(dir);
    const result = await runSkiffExpectingFailure(['--nodes', 'many'], dir);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('skiff: --nodes must be a whole number (got "many")');
  });
});
