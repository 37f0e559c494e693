import { request } from 'node:https';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { readKubeconfig, type KubeconfigConnection } from '@skiff/client';
import { adminKubeconfigIn, clusterDataDir } from './cluster-dir.js';
import { readUpRecord } from './up-record.js';
import type { Output } from './up.js';

/** How long `skiff status` waits for each answer. */
const ANSWER_TIMEOUT_MS = 2000;

/** A GET the cluster did not answer (no connection, no answer in time): nothing to summarise. */
class NoAnswer extends Error {}

function connectionProblem(err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ENOTFOUND':
      return 'unknown host';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}

/** GETs `path` as the kubeconfig's user; the status code and body (any status: /readyz answers 500 with its checks). */
function get(connection: KubeconfigConnection, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(path, connection.server);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        ca: connection.caPem,
        cert: connection.certPem,
        key: connection.keyPem,
        rejectUnauthorized: !connection.insecureSkipTlsVerify,
        headers: { accept: 'application/json', ...(connection.token ? { authorization: `Bearer ${connection.token}` } : {}) },
        timeout: ANSWER_TIMEOUT_MS,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new NoAnswer(`no answer in ${ANSWER_TIMEOUT_MS / 1000}s`)));
    req.on('error', (err) => reject(err instanceof NoAnswer ? err : new NoAnswer(connectionProblem(err))));
    req.end();
  });
}

async function getJson<T>(connection: KubeconfigConnection, path: string): Promise<T> {
  const { status, body } = await get(connection, path);
  if (status !== 200) throw new Error(`GET ${path} answered ${status}: ${body.slice(0, 200).trim()}`);
  return JSON.parse(body) as T;
}

interface NodeList {
  items: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }>;
}
interface PodList {
  items: Array<{ status?: { phase?: string } }>;
}

/** `[-]name failed: reason` lines of `/readyz?verbose`: the checks that fail. */
export function failedChecks(readyz: string): string[] {
  return readyz
    .split('\n')
    .map((line) => /^\[-\](\S+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

/** `3 Running, 1 Pending`, most common phase first; `none` for no pods. */
export function phaseSummary(pods: PodList['items']): string {
  const counts = new Map<string, number>();
  for (const pod of pods) counts.set(pod.status?.phase ?? 'Unknown', (counts.get(pod.status?.phase ?? 'Unknown') ?? 0) + 1);
  if (counts.size === 0) return 'none';
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([phase, count]) => `${count} ${phase}`)
    .join(', ');
}

/** Label and value rows; a long value of comma-separated parts goes on over several lines, under itself. */
function rows(entries: Array<[string, string]>, lineWidth = 100): string {
  const width = Math.max(...entries.map(([label]) => label.length)) + 2;
  const lines: string[] = [];
  for (const [label, value] of entries) {
    let line = label.padEnd(width);
    let empty = true;
    for (const part of value.split(/(?<=,) /)) {
      if (!empty && line.length + part.length + 1 > lineWidth) {
        lines.push(line.trimEnd());
        line = ' '.repeat(width);
        empty = true;
      }
      line += empty ? part : ` ${part}`;
      empty = false;
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/**
 * `skiff status`: what the cluster in a data dir (found as `skiff up` finds it) says about itself — its version,
 * preset, API server, nodes, pods, failed readiness checks, log file and the plugins it loaded per hook. Exit 1, with
 * one line, when nothing answers at the admin kubeconfig's server.
 */
export async function status(argv: string[], output: Output, cwd: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { 'data-dir': { type: 'string' }, config: { type: 'string', short: 'c' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length) throw new Error(`unexpected argument "${positionals[0]}"`);
  const dataDir = await clusterDataDir(cwd, { dataDir: values['data-dir'], configFile: values.config });
  const connection = readKubeconfig(adminKubeconfigIn(dataDir));

  let readyz: { status: number; body: string };
  try {
    readyz = await get(connection, '/readyz?verbose');
  } catch (err) {
    if (!(err instanceof NoAnswer)) throw err;
    output.err(`skiff: no cluster answers at ${connection.server} (${err.message})`);
    return 1;
  }
  const [version, nodes, pods] = await Promise.all([
    getJson<{ gitVersion?: string }>(connection, '/version'),
    getJson<NodeList>(connection, '/api/v1/nodes'),
    getJson<PodList>(connection, '/api/v1/pods'),
  ]);
  const record = readUpRecord(dataDir);
  const ready = nodes.items.filter((node) => node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
  const failed = failedChecks(readyz.body);
  const shown = (file: string) => relative(cwd, file) || '.';
  const entries: Array<[string, string]> = [
    ['cluster', `${connection.server} (Kubernetes ${version.gitVersion ?? 'unknown'}${record ? `, skiff ${record.skiff}` : ''})`],
    ['preset', record ? record.preset : 'unknown (no up.json: not started by skiff up)'],
    ['data dir', shown(dataDir)],
    ['nodes', `${ready}/${nodes.items.length} Ready`],
    ['pods', phaseSummary(pods.items)],
    ['readyz', readyz.status === 200 ? 'ok' : `failing: ${failed.join(', ') || `status ${readyz.status}`}`],
  ];
  if (record) {
    entries.push(['logs', record.logFile ? shown(record.logFile) : 'stderr of skiff up']);
    entries.push(['plugins', `${record.plugins} loaded (skiff plugins lists them and their taps)`]);
    entries.push([
      'taps',
      Object.entries(record.taps)
        .map(([hook, count]) => `${hook} ${count}`)
        .join(', '),
    ]);
  }
  output.out(rows(entries));
  return 0;
}
