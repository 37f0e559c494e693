// The client side of the HTTPS benchmarks: `concurrency` loops in a worker thread (so client and server do
// not share an event loop), each sending its next request when the previous one is answered, for a warm-up
// and then `durationMs` — or, with `count`, that many requests one after another. Answers requests,
// errors, req/s and the p50/p99 latency in ms.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const https = require('node:https');
const { url, method, body, bodies, contentType, ca, token, concurrency, warmupMs, durationMs, count } = workerData;
const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, ca });
let counter = 0;
function once() {
  return new Promise((resolve) => {
    // Pre-encoded bodies (protobuf, one name each) or a JSON template whose NAME is replaced.
    const payload = bodies ? Buffer.from(bodies[counter++ % bodies.length]) : body === undefined ? undefined : body.replace('NAME', 'p' + (counter++).toString(36));
    const headers = { authorization: 'Bearer ' + token, accept: 'application/json' };
    if (payload !== undefined) { headers['content-type'] = contentType ?? 'application/json'; headers['content-length'] = Buffer.byteLength(payload); }
    const started = process.hrtime.bigint();
    const req = https.request(url, { method, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ok: res.statusCode < 300, ns: Number(process.hrtime.bigint() - started) }));
    });
    req.on('error', () => resolve({ ok: false, ns: 0 }));
    req.end(payload);
  });
}
async function run() {
  const latencies = [];
  let errors = 0;
  if (count) {
    for (let i = 0; i < count; i++) { const r = await once(); if (r.ok) latencies.push(r.ns); else errors++; }
  } else {
    const warmupEnd = Date.now() + warmupMs;
    let measuring = false;
    const end = warmupEnd + durationMs;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const result = await once();
        if (Date.now() < warmupEnd) continue;
        if (!measuring) { measuring = true; parentPort.postMessage({ measuring: true }); }
        if (result.ok) latencies.push(result.ns); else errors++;
      }
    }));
  }
  latencies.sort((a, b) => a - b);
  const pick = (q) => (latencies[Math.floor(latencies.length * q)] ?? 0) / 1e6;
  parentPort.postMessage({ requests: latencies.length, errors, rps: count ? 0 : latencies.length / (durationMs / 1000), p50: pick(0.5), p99: pick(0.99) });
  agent.destroy();
}
run();
`;

/**
 * CPU time (µs) one thread has used, from /proc (Linux): by default the calling process's main thread, which
 * is the server's when the server runs in the benchmark's process (the client runs in a worker thread).
 * Undefined where /proc is not there.
 */
export function threadCpuMicros(pid = process.pid, tid = pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The kernel's clock ticks per second, in which /proc counts CPU time (100 on nearly every Linux). */
const TICKS_PER_SECOND = (() => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/**
 * Runs one scenario: `{ url, method, ca, token, body? | bodies?, contentType?, count? }`. With `cpuOf` (a
 * process id, or true for this process), the answer also has `cpuMicros`: the CPU that process's main thread
 * used per answered request while the timed requests ran (warm-up excluded).
 */
export function load({ concurrency = 16, seconds = 3, warmupMs = 500, cpuOf, ...options }) {
  const pid = cpuOf === true ? process.pid : cpuOf;
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { concurrency, warmupMs, durationMs: seconds * 1000, ...options } });
    let cpuAtStart = options.count && pid ? threadCpuMicros(pid) : undefined;
    worker.on('message', (message) => {
      if (message.measuring) {
        if (pid) cpuAtStart = threadCpuMicros(pid);
        return;
      }
      const cpuAtEnd = pid ? threadCpuMicros(pid) : undefined;
      if (cpuAtStart !== undefined && cpuAtEnd !== undefined && message.requests > 0) message.cpuMicros = (cpuAtEnd - cpuAtStart) / message.requests;
      resolve(message);
    });
    worker.once('error', reject);
  });
}
