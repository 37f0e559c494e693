import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingLogger } from '@skiff/kernel';
import { CniRunner, type ChainTarget } from './chain.js';
import { cniArgs, cniEnv, formatCniArgs, parseResult, pluginFailure } from './invoke.js';
import type { CniConfList } from './types.js';

const attachment = { containerId: 'c0ffee', podName: 'web-0', podNamespace: 'shop', podUid: '1f2e-3d4c' };

describe('CNI_ARGS and the environment', () => {
  it('names the pod the way Kubernetes runtimes do, unknown keys ignored', () => {
    expect(formatCniArgs(cniArgs(attachment))).toBe(
      'IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=c0ffee;K8S_POD_UID=1f2e-3d4c',
    );
    expect(formatCniArgs(cniArgs(attachment, [['IP', '10.250.1.7']]))).toMatch(/;K8S_POD_UID=1f2e-3d4c;IP=10\.250\.1\.7$/);
  });

  it('sets every CNI_* variable and keeps PATH', () => {
    const env = cniEnv({ command: 'ADD', containerId: 'c0ffee', netns: '/var/run/netns/p', ifName: 'eth0', args: cniArgs(attachment) }, '/usr/lib/cni', {
      PATH: '/usr/sbin:/usr/bin',
    });
    expect(env).toEqual({
      PATH: '/usr/sbin:/usr/bin',
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: 'c0ffee',
      CNI_NETNS: '/var/run/netns/p',
      CNI_IFNAME: 'eth0',
      CNI_ARGS: formatCniArgs(cniArgs(attachment)),
      CNI_PATH: '/usr/lib/cni',
    });
  });
});

describe('plugin failures', () => {
  it("turn the plugin's JSON error into a coded error naming the plugin", () => {
    const error = pluginFailure('bridge', 'ADD', 'skiff0', {
      code: 1,
      signal: null,
      stdout: JSON.stringify({ cniVersion: '1.0.0', code: 11, msg: 'failed to set bridge addr', details: 'could not add IP address to "skiff0": file exists' }),
      stderr: '',
    });
    expect(error.code).toBe('SKIFF_ERR_CNI_PLUGIN_FAILED');
    expect(error.message).toBe(
      'CNI plugin bridge failed (ADD) on network skiff0: failed to set bridge addr: could not add IP address to "skiff0": file exists (CNI error code 11)',
    );
    expect(error.plugin).toBe('bridge');
    expect(error.cniCode).toBe(11);
  });

  it('fall back to the last line of stderr and the exit status', () => {
    const error = pluginFailure('portmap', 'DEL', 'skiff0', { code: 2, signal: null, stdout: '', stderr: 'panic: boom\ngoroutine 1 [running]:\n' });
    expect(error.message).toBe('CNI plugin portmap failed (DEL) on network skiff0: goroutine 1 [running]: (exit status 2)');
    expect(pluginFailure('bridge', 'ADD', 'n', { code: null, signal: 'SIGKILL', stdout: '', stderr: '' }).message).toBe(
      'CNI plugin bridge failed (ADD) on network n: no output (killed by SIGKILL)',
    );
  });

  it('reject an ADD answer that is no result', () => {
    expect(() => parseResult('bridge', 'ADD', 'n', 'oops')).toThrow('CNI plugin bridge (ADD) on network n answered with something that is not JSON: oops');
    expect(() => parseResult('bridge', 'ADD', 'n', '{}')).toThrow('answered without a cniVersion');
  });
});

/**
 * Stand-in plugins: each logs its command and stdin, then answers its prevResult with its own name appended
 * to `interfaces` (or, for `broken`, a CNI error).
 */
const FAKE_PLUGIN = `#!/bin/sh
name=$(basename "$0")
input=$(cat)
printf '%s\\n' "$CNI_COMMAND $name $CNI_IFNAME $CNI_NETNS|$CNI_ARGS|$input" >> "$FAKE_LOG"
if [ "$name" = broken ]; then printf '{"code":7,"msg":"invalid network config","details":"no bridge"}'; exit 1; fi
if [ "$CNI_COMMAND" = ADD ]; then
  node -e 'const i=JSON.parse(process.argv[1]); const p=i.prevResult??{cniVersion:i.cniVersion,interfaces:[]}; p.interfaces.push({name:process.argv[2]}); console.log(JSON.stringify(p))' "$input" "$name"
fi
`;

describe('running a configuration list', () => {
  let binDir: string;
  let log: string;
  let runner: CniRunner;
  const list: CniConfList = { cniVersion: '1.0.0', name: 'fake', plugins: [{ type: 'first' }, { type: 'second', capabilities: { portMappings: true } }] };
  const target: ChainTarget = {
    containerId: 'c0ffee',
    netns: '/var/run/netns/p',
    ifName: 'eth0',
    args: cniArgs(attachment),
    runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] },
  };
  const calls = async () =>
    (await readFile(log, 'utf8').catch(() => ''))
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [head, args, input] = line.split('|');
        return { head, args, input: JSON.parse(input!) as Record<string, unknown> };
      });

  beforeAll(async () => {
    binDir = await mkdtemp(join(tmpdir(), 'skiff-cni-fake-'));
    log = join(binDir, 'calls.log');
    for (const name of ['first', 'second', 'broken']) {
      await writeFile(join(binDir, name), FAKE_PLUGIN);
      await chmod(join(binDir, name), 0o755);
    }
    runner = new CniRunner(binDir, { PATH: process.env.PATH, FAKE_LOG: log }, 10_000, recordingLogger());
  });
  afterAll(async () => {
    await rm(binDir, { recursive: true, force: true });
  });

  it('ADD runs the plugins in order, each with the previous result, and answers the last one', async () => {
    await rm(log, { force: true });
    const result = await runner.add(list, target);
    expect(result.interfaces).toEqual([{ name: 'first' }, { name: 'second' }]);
    const [first, second] = await calls();
    expect(first!.head).toBe('ADD first eth0 /var/run/netns/p');
    expect(first!.args).toBe(formatCniArgs(target.args));
    expect(first!.input).toEqual({ type: 'first', name: 'fake', cniVersion: '1.0.0' });
    expect(second!.input).toMatchObject({ prevResult: { interfaces: [{ name: 'first' }] }, runtimeConfig: target.runtimeConfig });
  });

  it('DEL runs them in reverse, each with the cached result', async () => {
    await rm(log, { force: true });
    const prevResult = { cniVersion: '1.0.0', interfaces: [{ name: 'first' }, { name: 'second' }] };
    await runner.del(list, { ...target, netns: '' }, prevResult);
    const heads = (await calls()).map((call) => call.head);
    expect(heads).toEqual(['DEL second eth0 ', 'DEL first eth0 ']);
    expect((await calls())[0]!.input.prevResult).toEqual(prevResult);
  });

  it("fails with the plugin's error, and DEL still runs the other plugins", async () => {
    const brokenList = { ...list, plugins: [{ type: 'first' }, { type: 'broken' }] };
    await expect(runner.add(brokenList, target)).rejects.toThrow(
      'CNI plugin broken failed (ADD) on network fake: invalid network config: no bridge (CNI error code 7)',
    );
    await rm(log, { force: true });
    await expect(runner.del(brokenList, target, undefined)).rejects.toMatchObject({ code: 'SKIFF_ERR_CNI_PLUGIN_FAILED', plugin: 'broken' });
    expect((await calls()).map((call) => call.head)).toEqual(['DEL broken eth0 /var/run/netns/p', 'DEL first eth0 /var/run/netns/p']);
  });

  it('says which plugin is missing from the plugin folder', async () => {
    await expect(runner.add({ ...list, plugins: [{ type: 'absent' }] }, target)).rejects.toThrow(`CNI plugin absent not found in ${binDir}`);
  });
});
