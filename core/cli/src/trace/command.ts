import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { RESOURCES, type ResourceType } from '@skiff/api';
import type { Span } from '@skiff/kernel';
import { adminKubeconfigIn, clusterDataDir } from '../cluster-dir.js';
import type { Output } from '../up.js';
import { renderHtml } from './html.js';
import { renderTimeline } from './timeline.js';

const TRACES = '/debug/skiff/traces';
/** kubectl's short names for the kinds one traces most. */
const SHORT_NAMES: Record<string, string> = {
  po: 'pods',
  deploy: 'deployments',
  rs: 'replicasets',
  ds: 'daemonsets',
  sts: 'statefulsets',
  svc: 'services',
  cm: 'configmaps',
  ns: 'namespaces',
  no: 'nodes',
  sa: 'serviceaccounts',
  pvc: 'persistentvolumeclaims',
  pv: 'persistentvolumes',
  ing: 'ingresses',
  cj: 'cronjobs',
  hpa: 'horizontalpodautoscalers',
};

/** `deployment`, `deployments`, `deploy`, `Deployment`, `deployments.apps`: the resource they name. */
export function resolveResource(text: string): ResourceType | undefined {
  const wanted = text.toLowerCase();
  const [name, ...groupParts] = wanted.split('.');
  const group = groupParts.join('.');
  const plural = SHORT_NAMES[name!] ?? name!;
  const all = Object.values(RESOURCES) as ResourceType[];
  return all.find(
    (r) =>
      (r.resource === plural || r.kind.toLowerCase() === plural || `${r.kind.toLowerCase()}s` === plural) && (groupParts.length === 0 || r.group === group),
  );
}

function objectPath(type: ResourceType, namespace: string, name: string): string {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  return `${base}${type.namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${type.resource}/${encodeURIComponent(name)}`;
}

interface Client {
  request(request: {
    method: 'GET' | 'POST' | 'DELETE';
    path: string;
    query: Record<string, string>;
    headers: Record<string, string>;
    body?: unknown;
  }): Promise<{ body?: unknown }>;
}

async function call<T>(client: Client, method: 'GET' | 'POST' | 'DELETE', query: Record<string, string> = {}, body?: unknown): Promise<T> {
  const response = await client.request({
    method,
    path: TRACES,
    query,
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return response.body as T;
}

interface TraceAnswer {
  id: string;
  open: boolean;
  waiting: boolean;
  spans: Span[];
  lastActivity: number;
  now: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * `skiff trace`: shows what happened for a request and everything it caused, from the spans the API server
 * records (docs/tracing.md). `--next` arms a trace for the next request and waits for it to settle; `KIND/NAME`
 * reads the traces that touched an object and what it owns; `--list` lists the traces held.
 */
export async function trace(argv: string[], output: Output, cwd: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      config: { type: 'string', short: 'c' },
      namespace: { type: 'string', short: 'n', default: 'default' },
      next: { type: 'boolean', default: false },
      any: { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
      id: { type: 'string' },
      json: { type: 'boolean', default: false },
      html: { type: 'string' },
      timeout: { type: 'string', default: '120' },
      settle: { type: 'string', default: '3' },
    },
    allowPositionals: true,
    strict: true,
  });
  const seconds = (flag: 'timeout' | 'settle') => {
    const value = Number(values[flag]);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${flag} must be a number of seconds (got "${values[flag]}")`);
    return value;
  };
  const [target, extra] = positionals;
  if (extra !== undefined) throw new Error(`unexpected argument "${extra}"`);
  const modes = [values.next, values.list, values.id !== undefined, target !== undefined].filter(Boolean).length;
  if (modes !== 1) throw new Error('skiff trace needs one of: KIND/NAME, --next, --id ID, --list');

  const kubeconfig = adminKubeconfigIn(await clusterDataDir(cwd, { dataDir: values['data-dir'], configFile: values.config }));
  const { HttpsTransport, readKubeconfig } = await import('@skiff/client');
  const { server, caPem, token, certPem, keyPem, insecureSkipTlsVerify } = readKubeconfig(kubeconfig);
  const client = new HttpsTransport({ server, caPem, token, certPem, keyPem, insecureSkipTlsVerify });
  try {
    if (values.list) {
      const { traces } = await call<{ traces: { trace: string; name: string; start: number; end: number; attrs?: Span['attrs'] }[] }>(client, 'GET');
      if (traces.length === 0) output.out('no traces held (tracing is off unless armed: skiff trace --next)');
      for (const root of traces)
        output.out(
          `${root.trace}  ${new Date(root.start).toISOString()}  ${(root.end - root.start).toFixed(1)}ms  ${root.name}${root.attrs?.code ? `  ${root.attrs.code}` : ''}`,
        );
      return 0;
    }
    let spans: Span[];
    let what: string;
    if (values.next || values.id !== undefined) {
      const id = values.id ?? (await call<{ id: string }>(client, 'POST', {}, { next: values.any ? 'any' : 'mutating' })).id;
      if (values.next) output.err(`skiff trace: waiting for the next ${values.any ? '' : 'create, update, patch or delete '}request (trace ${id})…`);
      spans = await settled(client, id, seconds('timeout') * 1000, seconds('settle') * 1000, values.next);
      what = `trace ${id}`;
    } else {
      const slash = target!.indexOf('/');
      if (slash <= 0 || slash === target!.length - 1) throw new Error(`name an object as KIND/NAME, e.g. deployment/web (got "${target}")`);
      const type = resolveResource(target!.slice(0, slash));
      if (!type) throw new Error(`unknown kind "${target!.slice(0, slash)}"`);
      const name = target!.slice(slash + 1);
      const object = (
        await client.request({ method: 'GET', path: objectPath(type, values.namespace, name), query: {}, headers: { accept: 'application/json' } })
      ).body as {
        metadata?: { uid?: string };
      };
      const uid = object.metadata?.uid;
      if (!uid) throw new Error(`${target} has no uid`);
      ({ spans } = await call<{ spans: Span[] }>(client, 'GET', { uid }));
      what = `${type.resource}/${name}`;
      if (spans.length === 0) {
        const status = await call<{ mode: string }>(client, 'GET', { status: '' });
        throw new Error(
          status.mode === 'on'
            ? `no spans held for ${what}: it was made before the oldest span still held`
            : `no spans held for ${what}: tracing is off; arm one with \`skiff trace --next\` before the command, or start the cluster with trace.mode "on"`,
        );
      }
    }
    if (values.json) output.out(JSON.stringify({ spans }, null, 2));
    if (values.html !== undefined) {
      const file = resolve(cwd, values.html);
      writeFileSync(file, renderHtml(spans, { title: `skiff trace ${what}` }));
      output.err(`skiff trace: wrote ${file}`);
    }
    if (!values.json && values.html === undefined) output.out(renderTimeline(spans, { width: process.stdout.columns, color: output.terminal !== undefined }));
    return 0;
  } finally {
    client.close();
  }
}

/** Polls one trace until no span came for `settleMs` (or it closed), then answers its spans. */
async function settled(client: Client, id: string, timeoutMs: number, settleMs: number, armed: boolean): Promise<Span[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await call<TraceAnswer>(client, 'GET', { id });
    if (!answer.waiting && answer.spans.length > 0 && (!answer.open || answer.now - answer.lastActivity >= settleMs)) return answer.spans;
    if (Date.now() > deadline) {
      if (armed && answer.waiting) await call(client, 'DELETE', { id });
      if (answer.spans.length > 0) return answer.spans;
      throw new Error(`no request was traced within ${Math.round(timeoutMs / 1000)}s`);
    }
    await sleep(250);
  }
}
