import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAIN_STAGE } from '@skiff/kernel';
import { runProgram } from './clients.js';
import { SKIFF_BIN, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// What `skiff up` prints while it starts, where its logs go, and the two commands that look at a cluster from outside:
// `skiff status` (a running one, and one that stopped) and `skiff plugins` (read offline, running or not). The cluster
// is started the way a person does, without --log-level, so its logs go to the data dir's log file.

interface DefaultUp {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `skiff up` with its defaults for logs (the harness's startSkiff passes --log-level warn), once its ready line is out. */
async function upWithDefaultLogs(dataDir: string): Promise<DefaultUp> {
  const child = spawn(process.execPath, [SKIFF_BIN, 'up', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await waitFor('the ready line', () => /^ready: https:\/\/\S+/m.test(out) || child.exitCode !== null, { timeoutMs: 60_000, intervalMs: 100 });
  if (child.exitCode !== null) throw new Error(`skiff up exited with ${child.exitCode}\nstdout:\n${out}\nstderr:\n${err}`);
  return { child, stdout: () => out, stderr: () => err, exited };
}

function skiff(...args: string[]) {
  return runProgram(process.execPath, [SKIFF_BIN, ...args], { timeoutMs: 60_000 });
}

interface PluginsJson {
  preset: string;
  plugins: Array<{ name: string; version: string; kernel: string }>;
  hooks: Array<{ name: string; kind: string; taps: Array<{ stage: number; plugin: string; name: string; registers?: string[] }> }>;
}

const dataDir = join(tempDir('cli-status'), '.skiff');
/** `skiff plugins --json` while the cluster runs. */
let running: PluginsJson;
let cluster: DefaultUp | undefined;
let server = '';

beforeAll(async () => {
  cluster = await upWithDefaultLogs(dataDir);
  server = /^ready: (https:\/\/\S+)/m.exec(cluster.stdout())![1]!;
}, 90_000);

afterAll(async () => {
  if (cluster && cluster.child.exitCode === null) {
    cluster.child.kill('SIGINT');
    await cluster.exited;
  }
  rmSync(join(dataDir, '..'), { recursive: true, force: true });
});

describe('skiff up with its default logs', () => {
  it('prints its start step by step with durations, then the kubeconfig and ready lines as before, and nothing on stderr', () => {
    const lines = cluster!.stdout().split('\n');
    const seconds = String.raw`\(\d+\.\d\ds\)`;
    const expected = [
      /^skiff: starting cluster \(preset dev, data dir \S+\)$/,
      /^skiff: logs in \S+logs\/skiff\.log \(--log-format text shows them here instead\)$/,
      new RegExp(`^skiff: \\d+ plugins loaded ${seconds}$`),
      new RegExp(`^skiff: store opened ${seconds}$`),
      new RegExp(`^skiff: API server serving at ${server.replace(/[.]/g, '\\.')} ${seconds}$`),
      new RegExp(`^skiff: \\d+ controllers started ${seconds}$`),
      new RegExp(`^skiff: scheduler started ${seconds}$`),
      new RegExp(`^skiff: node-1: kubelet started \\(runtime simulated, network ipam\\) ${seconds}$`),
      new RegExp(`^skiff: 1 node started ${seconds}$`),
      /^kubeconfig: \S+\/admin\.kubeconfig$/,
      /^ready: https:\/\/127\.0\.0\.1:\d+ with 1 node in \d+\.\d\ds \(Ctrl-C stops\)$/,
    ];
    // Slow steps of other plugins may come between the named ones: the named ones come in this order.
    let at = 0;
    for (const pattern of expected) {
      const found = lines.findIndex((line, i) => i >= at && pattern.test(line));
      expect(found, `${pattern} after line ${at} of\n${cluster!.stdout()}`).toBeGreaterThanOrEqual(0);
      at = found + 1;
    }
    expect(cluster!.stderr()).toBe('');
  });

  it('writes the components’ JSON logs to <data dir>/logs/skiff.log, owner-only', () => {
    const file = join(dataDir, 'logs', 'skiff.log');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const records = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; component?: string; msg: string; node?: string });
    expect(records.find((r) => r.component === 'apiserver' && r.msg === 'API server listening')).toBeDefined();
    expect(records.find((r) => r.node === 'node-1' && r.msg === 'kubelet started')).toBeDefined();
  });
});

describe('skiff status', () => {
  it('summarises the running cluster: server and version, preset, nodes Ready, pods, readiness, logs, plugins per hook', async () => {
    let result = await skiff('status', '--data-dir', dataDir);
    await waitFor(
      'node-1 Ready in skiff status',
      async () => {
        result = await skiff('status', '--data-dir', dataDir);
        return /^nodes {5}1\/1 Ready$/m.test(result.stdout);
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const { stdout } = result;
    expect(stdout).toMatch(new RegExp(`^cluster {3}${server.replace(/[.]/g, '\\.')} \\(Kubernetes v1\\.\\d+\\.\\d+\\S*, skiff \\d+\\.\\d+\\.\\d+\\)$`, 'm'));
    expect(stdout).toMatch(/^preset {4}dev$/m);
    expect(stdout).toMatch(/^data dir {2}\S+\.skiff$/m);
    expect(stdout).toMatch(/^pods {6}(none|\d+ \w+(, \d+ \w+)*)$/m);
    expect(stdout).toMatch(/^readyz {4}ok$/m);
    expect(stdout).toMatch(/^logs {6}\S+\/logs\/skiff\.log$/m);
    expect(stdout).toMatch(/^plugins {3}\d+ loaded/m);
    expect(stdout).toMatch(/^taps {6}.*\bauthenticate \d+,/m);
  });

  it('counts the pods by phase', async () => {
    const kubeconfig = join(dataDir, 'admin.kubeconfig');
    const created = await runProgram('kubectl', ['--kubeconfig', kubeconfig, 'run', 'status-pod', '--image=nginx', '--restart=Never']);
    expect(created.code, created.stderr).toBe(0);
    await waitFor('the pod Running in skiff status', async () => /^pods {6}.*\b1 Running\b/m.test((await skiff('status', '--data-dir', dataDir)).stdout), {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
  });
});

describe('skiff plugins', () => {
  it('lists the loaded plugins with version and kernel range, and the authenticate taps in their stage order', async () => {
    const result = await skiff('plugins', '--data-dir', dataDir, '--json');
    expect(result.code, result.stderr).toBe(0);
    running = JSON.parse(result.stdout) as PluginsJson;
    expect(running.preset).toBe('dev');
    expect(running.plugins).toContainEqual({ name: '@skiff/apiserver', version: expect.stringMatching(/^\d+\.\d+\.\d+/), kernel: expect.any(String) });
    const authenticate = running.hooks.find((hook) => hook.name === 'authenticate')!;
    expect(authenticate.kind).toBe('AsyncSeriesBailHook');
    const stages = authenticate.taps.map((tap) => tap.stage);
    expect(stages).toEqual([...stages].sort((a, b) => a - b));
    expect(authenticate.taps[0]).toMatchObject({ stage: CHAIN_STAGE.LOOPBACK, plugin: '@skiff/apiserver' });
    expect(authenticate.taps.find((tap) => tap.plugin === '@skiff/plugin-authn-x509')!.stage).toBe(CHAIN_STAGE.CERTIFICATE);
    expect(authenticate.taps.find((tap) => tap.plugin === '@skiff/plugin-authn-token-file')!.stage).toBe(CHAIN_STAGE.TOKEN);
    expect(authenticate.taps.at(-1)).toMatchObject({ stage: CHAIN_STAGE.ANONYMOUS, plugin: '@skiff/plugin-authn-anonymous' });
  });

  it('names what each tap of the registration hooks registers: controllers, scheduler plugins, the runtime', () => {
    const registered = (hook: string) => running.hooks.find((h) => h.name === hook)!.taps.flatMap((tap) => tap.registers ?? []);
    expect(registered('controllers')).toEqual(expect.arrayContaining(['deployment', 'replicaset', 'garbage-collector', 'namespace']));
    expect(running.hooks.find((h) => h.name === 'controllers')!.taps.find((tap) => tap.plugin === '@skiff/plugin-controller-deployment')!.registers).toEqual([
      'deployment',
    ]);
    expect(registered('schedulerPlugins')).toEqual(expect.arrayContaining(['NodeResourcesFit', 'DefaultBinder']));
    expect(registered('runtimes')).toEqual(['simulated']);
  });

  it('prints the same as a table and per hook in text', async () => {
    const { code, stdout } = await skiff('plugins', '--data-dir', dataDir);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^preset dev, data dir \S+: \d+ plugins$/m);
    expect(stdout).toMatch(/^PLUGIN +VERSION +KERNEL$/m);
    expect(stdout).toMatch(/^authenticate \(AsyncSeriesBailHook, \d+ taps\)\n {2}-1000 +@skiff\/apiserver$/m);
    expect(stdout).toMatch(/^ {2}0 +@skiff\/plugin-controller-deployment +→ deployment$/m);
  });
});

describe('a stopped cluster', () => {
  it('skiff status says in one line that nothing answers, and exits 1', async () => {
    cluster!.child.kill('SIGINT');
    expect(await cluster!.exited).toBe(0);
    const result = await skiff('status', '--data-dir', dataDir);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `skiff: no cluster answers at ${server} (connection refused)\n` });
  });

  it('skiff plugins still lists the same plugins and taps, read offline', async () => {
    const result = await skiff('plugins', '--data-dir', dataDir, '--json');
    expect(result.code, result.stderr).toBe(0);
    const stopped = JSON.parse(result.stdout) as PluginsJson;
    expect(stopped).toEqual(running);
  });
});

describe('skiff up --log-format text', () => {
  let text: RunningSkiff | undefined;
  const textDir = join(tempDir('cli-status-text'), '.skiff');
  afterAll(async () => {
    await text?.stop();
    rmSync(join(textDir, '..'), { recursive: true, force: true });
  });

  it('brings the logs back to stderr as lines for people, and writes no log file', async () => {
    text = await startSkiff(['--nodes', '0', '--data-dir', textDir, '--log-format', 'text', '--log-level', 'info'], { timeoutMs: 60_000 });
    expect(text.stdout()).not.toContain('skiff: logs in');
    expect(text.stderr()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}apiserver: API server listening url=https:\/\/127\.0\.0\.1:\d+/m);
    expect(existsSync(join(textDir, 'logs'))).toBe(false);
  });
});
