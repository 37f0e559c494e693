import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { helmPath, kubectlOn, kubectlVersions, runProgram } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The Job, CronJob and ttl-after-finished controllers in a real `skiff up --nodes 2`, driven by the real
// kubectl 1.36 and helm: `kubectl create job` runs to completion and `kubectl wait --for=condition=complete`
// returns, completions and parallelism are counted, a failing pod exhausts the backoff limit and the Job is
// Failed, `kubectl create job --from=cronjob/…` runs a CronJob's template, a Job with ttlSecondsAfterFinished
// goes away, deleting a Job takes its pods along, and a chart's pre-install hook Job lets `helm install`
// finish. The simulated runtime's containers of Never/OnFailure pods exit after 1 s. Scheduling on a moved
// clock is the plugin's own test (plugins/controller-job/src/cronjob-controller.test.ts).

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('jobs');
const cacheDir = tempDir('jobs-cache');
const WAIT = { timeoutMs: 60_000 };
let skiff: RunningSkiff;
const { kubectl, ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

// Replacing a failed pod waits 1 s instead of 10 s to keep the test short.
const CONFIG = `export default {
  plugins: [
    ['@skiff/plugin-controller-job', { podFailureBackoffMs: 1000 }],
  ],
};
`;

beforeAll(async () => {
  writeFileSync(join(project, 'skiff.config.mjs'), CONFIG);
  skiff = await startSkiff(['--nodes', '2', '--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const podsOf = async (job: string): Promise<any[]> => (await json('get', 'pods', '-l', `batch.kubernetes.io/job-name=${job}`)).items;

function jobManifest(name: string, spec: string, annotations = ''): string {
  return `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
spec:
${spec}
  template:
    metadata:
      annotations: {${annotations}}
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: busybox:1.36
        command: ["sh", "-c", "echo done"]
`;
}

describe('Jobs and CronJobs with kubectl 1.36', () => {
  it('kubectl create job runs to completion and kubectl wait --for=condition=complete returns', async () => {
    expect(await ok('create', 'job', 'hello', '--image=busybox:1.36', '--', 'echo', 'hi')).toBe('job.batch/hello created\n');
    expect(await ok('wait', '--for=condition=complete', 'job/hello', '--timeout=60s')).toBe('job.batch/hello condition met\n');
    const job = await json('get', 'job', 'hello');
    expect(job.status).toMatchObject({ succeeded: 1, ready: 0, terminating: 0, uncountedTerminatedPods: {} });
    expect(job.status.conditions.map((c: any) => `${c.type}=${c.status}`)).toEqual(['SuccessCriteriaMet=True', 'Complete=True']);
    expect(job.status.completionTime).toBeDefined();
    const table = (await ok('get', 'job', 'hello')).split('\n');
    expect(table[0]).toMatch(/^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$/);
    expect(table[1]).toMatch(/^hello\s+Complete\s+1\/1\s+\d+s\s+\S+$/);
    const [pod] = await podsOf('hello');
    expect(pod.status.phase).toBe('Succeeded');
    expect(pod.metadata.finalizers ?? []).not.toContain('batch.kubernetes.io/job-tracking');
    expect(pod.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect((await ok('get', 'pods', '-l', 'job-name=hello')).split('\n')[1]).toMatch(/^hello-\w{5}\s+0\/1\s+Completed\s+0\s+\S+$/);
    const describe = await ok('describe', 'job', 'hello');
    expect(describe).toMatch(/Pods Statuses:\s+0 Active \(0 Ready\) \/ 1 Succeeded \/ 0 Failed/);
    expect(describe).toMatch(/Normal\s+Completed\s+\S+\s+job-controller\s+Job completed/);
  });

  it('counts completions run with the given parallelism', async () => {
    expect(await apply(jobManifest('batch', '  completions: 4\n  parallelism: 2'))).toBe('job.batch/batch created\n');
    expect(await ok('wait', '--for=condition=complete', 'job/batch', '--timeout=60s')).toBe('job.batch/batch condition met\n');
    expect(await ok('get', 'job', 'batch', '-o', 'jsonpath={.status.succeeded}')).toBe('4');
    const pods = await podsOf('batch');
    expect(pods.map((pod) => pod.status.phase)).toEqual(['Succeeded', 'Succeeded', 'Succeeded', 'Succeeded']);
    expect((await ok('get', 'job', 'batch')).split('\n')[1]).toMatch(/^batch\s+Complete\s+4\/4\s+/);
  });

  it('runs an Indexed Job: one pod per index and completedIndexes', async () => {
    await apply(jobManifest('indexed', '  completions: 3\n  parallelism: 3\n  completionMode: Indexed'));
    await ok('wait', '--for=condition=complete', 'job/indexed', '--timeout=60s');
    expect(await ok('get', 'job', 'indexed', '-o', 'jsonpath={.status.completedIndexes}')).toBe('0-2');
    const indexes = (await podsOf('indexed')).map((pod) => pod.metadata.labels['batch.kubernetes.io/job-completion-index']).sort();
    expect(indexes).toEqual(['0', '1', '2']);
  });

  it('a failing pod exhausts backoffLimit and the Job is Failed', async () => {
    const failing = '"skiff.io/simulate-exit-code": "1", "skiff.io/simulate-run-ms": "300"';
    await apply(jobManifest('doomed', '  backoffLimit: 1', failing));
    expect(await ok('wait', '--for=condition=failed', 'job/doomed', '--timeout=60s')).toBe('job.batch/doomed condition met\n');
    const job = await json('get', 'job', 'doomed');
    expect(job.status.failed).toBe(2);
    expect(job.status.conditions.find((c: any) => c.type === 'Failed')).toMatchObject({
      status: 'True',
      reason: 'BackoffLimitExceeded',
      message: 'Job has reached the specified backoff limit',
    });
    expect((await ok('get', 'job', 'doomed')).split('\n')[1]).toMatch(/^doomed\s+Failed\s+0\/1\s+/);
    const pods = await podsOf('doomed');
    expect(pods.map((pod) => pod.status.phase)).toEqual(['Failed', 'Failed']);
    expect(pods[0].status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    const events = await ok('get', 'events', '--field-selector', 'involvedObject.name=doomed');
    expect(events).toMatch(/Warning\s+BackoffLimitExceeded\s+job\/doomed\s+Job has reached the specified backoff limit/);
  });

  it('kubectl create job --from=cronjob/… runs the CronJob template', async () => {
    expect(await ok('create', 'cronjob', 'nightly', '--image=busybox:1.36', '--schedule=0 3 * * *', '--', 'echo', 'nightly')).toBe(
      'cronjob.batch/nightly created\n',
    );
    expect(await ok('create', 'job', 'nightly-now', '--from=cronjob/nightly')).toBe('job.batch/nightly-now created\n');
    expect(await ok('wait', '--for=condition=complete', 'job/nightly-now', '--timeout=60s')).toBe('job.batch/nightly-now condition met\n');
    const job = await json('get', 'job', 'nightly-now');
    expect(job.metadata.annotations).toMatchObject({ 'cronjob.kubernetes.io/instantiate': 'manual' });
    expect(job.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'CronJob', name: 'nightly', controller: true })]);
    const cronJob = await json('get', 'cronjob', 'nightly');
    expect(cronJob.status?.lastSuccessfulTime).toBe(job.status.completionTime);
    expect(cronJob.status?.lastScheduleTime).toBeUndefined();
  });

  it('deletes a finished Job after ttlSecondsAfterFinished, and a deleted Job takes its pods along', async () => {
    await apply(jobManifest('fleeting', '  ttlSecondsAfterFinished: 0'));
    expect(await ok('wait', '--for=delete', 'job/fleeting', '--timeout=60s')).toBe('job.batch/fleeting condition met\n');
    await waitFor('the fleeting pods gone', async () => (await podsOf('fleeting')).length === 0, WAIT);
    expect(await ok('delete', 'job', 'hello')).toBe('job.batch "hello" deleted from default namespace\n');
    await waitFor('the hello pods gone', async () => (await podsOf('hello')).length === 0, WAIT);
  });

  it("a chart's pre-install hook Job finishes, so helm install succeeds and deletes the hook", async () => {
    const chart = join(project, 'hooked');
    mkdirSync(join(chart, 'templates'), { recursive: true });
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: hooked\nversion: 0.1.0\n');
    writeFileSync(
      join(chart, 'templates/hook.yaml'),
      `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-setup
  annotations:
    helm.sh/hook: pre-install
    helm.sh/hook-delete-policy: hook-succeeded
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: setup
        image: busybox:1.36
        command: ["sh", "-c", "echo setting up"]
`,
    );
    writeFileSync(
      join(chart, 'templates/config.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  ready: "yes"\n',
    );
    const helm = await runProgram(helmPath(), ['--kubeconfig', skiff.kubeconfig, 'install', 'demo', chart, '--timeout', '60s'], { timeoutMs: 90_000 });
    expect(helm.stderr).toBe('');
    expect(helm.code).toBe(0);
    expect(helm.stdout).toMatch(/STATUS: deployed/);
    expect(await ok('get', 'configmap', 'demo-config', '-o', 'jsonpath={.data.ready}')).toBe('yes');
    await waitFor('the hook job deleted', async () => (await kubectl(['get', 'job', 'demo-setup'])).code !== 0, WAIT);
  });
});
