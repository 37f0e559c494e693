#!/usr/bin/env node
// What API Priority and Fairness (@skiff/plugin-flowcontrol-apf) costs a request that does not have to wait:
// GETs of one pod over HTTPS keep-alive by 16 clients, by a system:masters user (the exempt level) and by a plain
// user (classified through every FlowSchema down to global-default, queued fairly, seats taken and given back),
// each on a server without the plugin (the baseline) and with it. The load runs in a worker thread so client and
// server do not share an event loop. BENCH_SECONDS (default 3) per scenario. Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHAIN_STAGE, definePlugin } from '@skiff/kernel';
import flowControl from '@skiff/plugin-flowcontrol-apf';
import { startBenchApiServer } from './bench-cluster.mjs';
import { load as runLoad } from './https-load.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PLAIN_TOKEN = 'plain-token';

/** A second token, for a user outside system:masters, and an authorizer that lets that user read. */
const plainUser = definePlugin({
  name: 'bench-plain-user',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    const user = { username: 'alice', groups: ['system:authenticated'] };
    kernel.hooks.authenticate.tap({ name: 'bench-plain-user', stage: CHAIN_STAGE.TOKEN }, (request) =>
      request.headers.authorization === `Bearer ${PLAIN_TOKEN}` ? { user } : undefined,
    );
    kernel.hooks.authorize.tap('bench-plain-user', (attributes) => (attributes.user.username === 'alice' ? { decision: 'allow' } : undefined));
  },
});

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bench-get' }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } };

async function scenario(name, plugins, token) {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-flowcontrol-'));
  const server = await startBenchApiServer({ plugins: [plainUser, ...plugins], dataDir });
  try {
    const created = await server.call('POST', '/api/v1/namespaces/default/pods', pod);
    if (created.status !== 201) throw new Error(`could not create the pod to read: ${JSON.stringify(created.body)}`);
    const result = await runLoad({
      url: `${server.url}/api/v1/namespaces/default/pods/bench-get`,
      method: 'GET',
      ca: server.caPem,
      token: token ?? server.token,
      concurrency: CONCURRENCY,
      seconds: SECONDS,
    });
    return { name, ...result };
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const rows = [
  await scenario('baseline: system:masters, no flow control', []),
  await scenario('flow control, system:masters (exempt)', [flowControl]),
  await scenario('baseline: plain user, no flow control', [], PLAIN_TOKEN),
  await scenario('flow control, plain user (global-default)', [flowControl], PLAIN_TOKEN),
];
console.table(rows);
