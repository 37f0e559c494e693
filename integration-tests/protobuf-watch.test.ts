import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlVersions, runProgram } from './clients.js';
import { startSkiff, tempDir, type RunningSkiff } from './harness.js';

// kubectl 1.32 and later watch built-in kinds in protobuf (`kubectl run -i` waits for its pod through a typed
// informer: a watch-list stream, then a plain watch). client-go reads each watch frame straight into a
// WatchEvent, so a frame with anything before the event (a magic, an envelope) fails to decode: the watch-list
// falls back to a list and every later watch ends at its first event with "unable to decode an event from the
// watch stream". kubectl still gets there by listing again, so the exit code alone would not show it; its
// log at -v=4 does.
const PROTOBUF_CLIENTS = kubectlVersions().filter(({ minor }) => minor >= 32);

let skiff: RunningSkiff;
const dataDir = tempDir('protobuf-watch');
const cacheRoot = tempDir('protobuf-watch-cache');

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '1']);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(cacheRoot, { recursive: true, force: true });
});

describe.each(PROTOBUF_CLIENTS)('kubectl 1.$minor', ({ minor, path }) => {
  it('run -i --rm decodes every event of its protobuf watches', async () => {
    const name = `pb-watch-1-${minor}`;
    const args = ['--kubeconfig', skiff.kubeconfig, '--cache-dir', join(cacheRoot, `1.${minor}`), '-v=4'];
    const run = await runProgram(path, [...args, 'run', '-i', '--rm', '--restart=Never', name, '--image=busybox', '--', 'sh', '-c', 'cat'], {
      input: 'hi\n',
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`pod "${name}" deleted`);
    expect(run.stderr).not.toMatch(/unable to decode|watch ended with error|Falling back to regular list/i);
  });
});
