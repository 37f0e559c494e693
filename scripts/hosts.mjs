// Several "machines" on one Linux box: network namespaces joined by a bridge, each with its own address, running a
// Skiff control plane (host 0) and joined nodes (hosts 1…N-1). For tests and for trying a multi-machine cluster
// without machines (docs/joining-nodes.md). Root only.
//
//   node scripts/hosts.mjs up [--hosts 3] [--preset local|dev] [--control-preset standard] [--routed 3,4] [--dir .skiff-hosts]
//                             (--routed: hosts on a second network, routed through this namespace: VXLAN between nodes)
//                                                             start them; prints the kubeconfig
//   node scripts/hosts.mjs down [--dir .skiff-hosts]                                  stop them and remove the namespaces
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const SKIFF = fileURLToPath(new URL('../core/cli/bin/skiff.js', import.meta.url));
/**
 * The hosts' networks: on network n the bridge `skiff-hosts<n>` in the root namespace holds 192.168.(77 + n).1 and
 * host i holds .(10 + i). Hosts on different networks share no link: the root namespace routes between them, so
 * their nodes reach each other's pods through the overlay (VXLAN), not by host-gateway routes.
 */
export const HOSTS_SUBNET = { prefix: '192.168.77', bits: 24 };
export const HOSTS_BRIDGE = 'skiff-hosts';
/** The pod and Service ranges, unreachable in every host's table while the hosts run (more specific routes win). */
export const CLUSTER_RANGES = ['10.96.0.0/12', '10.244.0.0/16'];

const run = (command, args) => execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const tryRun = (command, args) => {
  try {
    return run(command, args);
  } catch {
    return undefined;
  }
};

export function hostName(index) {
  return `skiff-h${index}`;
}

/** The prefix of network `network` (0: 192.168.77). */
function networkPrefix(network) {
  return `192.168.${77 + network}`;
}

function bridgeOf(network) {
  return network === 0 ? HOSTS_BRIDGE : `${HOSTS_BRIDGE}${network}`;
}

export function hostAddress(index, network = 0) {
  return `${networkPrefix(network)}.${10 + index}`;
}

/**
 * Makes `count` namespaces on bridges, each with loopback, an address, a default route to its bridge, unreachable
 * cluster ranges. Hosts listed in `routed` are on a second network, reached from the others through the root namespace.
 */
export function createHosts(count, routed = []) {
  const networks = routed.length > 0 ? [0, 1] : [0];
  for (const network of networks) {
    const bridge = bridgeOf(network);
    if (tryRun('ip', ['link', 'show', bridge])) continue;
    run('ip', ['link', 'add', bridge, 'type', 'bridge']);
    run('ip', ['addr', 'add', `${networkPrefix(network)}.1/${HOSTS_SUBNET.bits}`, 'dev', bridge]);
    run('ip', ['link', 'set', bridge, 'up']);
  }
  // The root namespace is the router between the networks.
  if (routed.length > 0) run('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
  for (let index = 0; index < count; index++) {
    const network = routed.includes(index) ? 1 : 0;
    const ns = hostName(index);
    tryRun('ip', ['netns', 'del', ns]);
    tryRun('ip', ['link', 'del', `${ns}-v`]);
    run('ip', ['netns', 'add', ns]);
    run('ip', ['link', 'add', `${ns}-v`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    run('ip', ['link', 'set', `${ns}-v`, 'master', bridgeOf(network), 'up']);
    const inHost = (args) => run('ip', ['netns', 'exec', ns, ...args]);
    inHost(['ip', 'link', 'set', 'lo', 'up']);
    inHost(['ip', 'addr', 'add', `${hostAddress(index, network)}/${HOSTS_SUBNET.bits}`, 'dev', 'eth0']);
    inHost(['ip', 'link', 'set', 'eth0', 'up']);
    // A default route, so each host has "the interface the default route leaves by"; it ends at the bridge.
    inHost(['ip', 'route', 'add', 'default', 'via', `${networkPrefix(network)}.1`]);
    for (const range of CLUSTER_RANGES) inHost(['ip', 'route', 'replace', 'unreachable', range]);
    inHost(['sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  }
}

export function removeHosts(count) {
  for (let index = 0; index < count; index++) {
    tryRun('ip', ['netns', 'del', hostName(index)]);
    tryRun('ip', ['link', 'del', `${hostName(index)}-v`]);
  }
  for (const network of [0, 1]) tryRun('ip', ['link', 'del', bridgeOf(network)]);
}

/**
 * The command line that runs `argv` in a host's network namespace only. Not `ip netns exec`: that also makes a mount
 * namespace with a fresh /sys, which hides /sys/fs/cgroup from the node's containerd and runc.
 */
export function inHostCommand(index, argv) {
  return ['nsenter', `--net=/run/netns/${hostName(index)}`, '--', ...argv];
}

/** Runs `skiff …` in a host's namespace, its output to `log`; answers the child process. */
export function skiffIn(index, args, log, cwd) {
  const out = openSync(log, 'a');
  const [command, ...rest] = inHostCommand(index, [process.execPath, SKIFF, ...args]);
  return spawn(command, rest, { cwd, stdio: ['ignore', out, out], detached: true });
}

async function waitForLine(file, pattern, timeoutMs, what, fromOffset = 0) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = existsSync(file) ? readFileSync(file, 'utf8').slice(fromOffset) : '';
    const match = pattern.exec(text);
    if (match) return match;
    if (
      /^skiff: /m.test(text) &&
      /failed|cannot|must|error/i.test(
        text
          .split('\n')
          .filter((l) => l.startsWith('skiff: '))
          .join('\n'),
      )
    )
      throw new Error(`${what} failed; see ${file}:\n${text.slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs / 1000}s; see ${file}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The control plane's config: the chosen preset with no nodes of its own, listening on every interface of host 0, and
 * the cluster DNS server on host 0's address (the nodes' service proxies carry the kube-dns Service to it).
 */
export function controlPlaneConfig(controlPreset, controlNodes = 0) {
  return {
    preset: controlPreset,
    nodes: controlNodes,
    host: '0.0.0.0',
    advertiseAddress: hostAddress(0),
    plugins: [['@skiff/plugin-dns', { address: 'host' }]],
  };
}

/** Starts (or starts again) host `index`'s node: `skiff join` with `flags` (the token and CA pin; none once it has joined). */
export function startNode(dir, index, flags = []) {
  const { server, preset, routed = [] } = JSON.parse(readFileSync(join(dir, 'join.json'), 'utf8'));
  const args = [
    'join',
    server,
    ...flags,
    '--preset',
    preset,
    '--node-name',
    `host-${index}`,
    '--node-ip',
    hostAddress(index, routed.includes(index) ? 1 : 0),
    '--data-dir',
    join(dir, hostName(index)),
  ];
  return skiffIn(index, args, join(dir, `${hostName(index)}.log`), dir);
}

/** Waits for a line of a host's log (`ready: …`) after `fromOffset` characters, failing early when the process reported a failure. */
export function waitForHostLine(dir, index, pattern, timeoutMs, fromOffset = 0) {
  return waitForLine(join(dir, `${hostName(index)}.log`), pattern, timeoutMs, index === 0 ? 'the control plane' : `node host-${index}`, fromOffset);
}

export async function up({ hosts, preset, controlPreset = 'standard', controlNodes = 0, routed = [], dir }) {
  if (hosts < 2) throw new Error('--hosts must be at least 2 (a control plane and a node)');
  if (routed.includes(0)) throw new Error('the control plane (host 0) stays on the first network');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  createHosts(hosts, routed);
  const pids = [];
  const controlLog = join(dir, `${hostName(0)}.log`);
  const configFile = join(dir, 'control-plane.config.json');
  writeFileSync(configFile, JSON.stringify(controlPlaneConfig(controlPreset, controlNodes), null, 2));
  const control = skiffIn(0, ['up', '--config', configFile, '--data-dir', join(dir, hostName(0))], controlLog, dir);
  pids.push(control.pid);
  writeFileSync(join(dir, 'pids'), pids.join('\n'));
  await waitForLine(controlLog, /^ready: /m, 120_000, 'the control plane');
  const [command, ...rest] = inHostCommand(0, [process.execPath, SKIFF, 'token', 'create', '--data-dir', join(dir, hostName(0))]);
  const joinCommand = run(command, rest).trim();
  const [, , server, ...flags] = joinCommand.split(' ');
  writeFileSync(join(dir, 'join.json'), JSON.stringify({ server, preset, routed }));
  for (let index = 1; index < hosts; index++) {
    pids.push(startNode(dir, index, flags).pid);
    writeFileSync(join(dir, 'pids'), pids.join('\n'));
  }
  for (let index = 1; index < hosts; index++) await waitForHostLine(dir, index, /^ready: /m, 180_000);
  // The admin kubeconfig names the control plane's address on the hosts' network, which this namespace reaches too.
  const kubeconfig = join(dir, 'admin.kubeconfig');
  const text = readFileSync(join(dir, hostName(0), 'admin.kubeconfig'), 'utf8').replace(/server: https:\/\/[^\s]+/, `server: https://${hostAddress(0)}:6443`);
  writeFileSync(kubeconfig, text, { mode: 0o600 });
  writeFileSync(join(dir, 'hosts'), String(hosts));
  console.log(`hosts: ${hosts} (control plane ${controlPreset} on ${hostAddress(0)}, nodes host-1…host-${hosts - 1}); logs in ${dir}`);
  console.log(`kubeconfig: ${kubeconfig}`);
  console.log(`try: kubectl --kubeconfig ${kubeconfig} get nodes -o wide`);
  return { kubeconfig, pids };
}

/**
 * A node killed with SIGKILL that never started again leaves its containerd (in a session of its own), the shims
 * and their containers behind: each containerd whose config lies under `dir` is ended with everything it started.
 */
function endLeftovers(dir) {
  const processes = run('ps', ['-eo', 'pid=,ppid=,args='])
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter(Boolean)
    .map(([, pid, ppid, args]) => ({ pid: Number(pid), ppid: Number(ppid), args }));
  const kill = (pid) => tryRun('kill', ['-9', String(pid)]);
  const tree = (pid) => [pid, ...processes.filter((p) => p.ppid === pid).flatMap((child) => tree(child.pid))];
  for (const containerd of processes.filter((p) => p.args.startsWith('/usr/bin/containerd ') && p.args.includes(`${dir}/`))) {
    const configFile = /--config (\S+)/.exec(containerd.args)?.[1];
    const socket = configFile && existsSync(configFile) ? /address\s*=\s*"([^"]+containerd\.sock)"/.exec(readFileSync(configFile, 'utf8'))?.[1] : undefined;
    const shims = socket ? processes.filter((p) => p.args.includes('containerd-shim') && p.args.includes(`-address ${socket}`)) : [];
    for (const shim of shims) tree(shim.pid).reverse().forEach(kill);
    kill(containerd.pid);
  }
}

export async function down({ dir }) {
  const pidFile = join(dir, 'pids');
  const pids = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number) : [];
  // Nodes first, then the control plane; each stops its own pods and containerd on SIGTERM.
  for (const pid of pids.reverse()) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      continue;
    }
    for (let waited = 0; waited < 30_000; waited += 200) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  endLeftovers(dir);
  const count = existsSync(join(dir, 'hosts')) ? Number(readFileSync(join(dir, 'hosts'), 'utf8')) : 8;
  removeHosts(count);
  rmSync(pidFile, { force: true });
  console.log('hosts removed');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    options: {
      hosts: { type: 'string', default: '3' },
      preset: { type: 'string', default: 'local' },
      'control-preset': { type: 'string', default: 'standard' },
      routed: { type: 'string', default: '' },
      dir: { type: 'string', default: '.skiff-hosts' },
    },
    allowPositionals: true,
  });
  const routed = values.routed ? values.routed.split(',').map(Number) : [];
  const options = { hosts: Number(values.hosts), preset: values.preset, controlPreset: values['control-preset'], routed, dir: resolve(values.dir) };
  const command = positionals[0];
  (command === 'up'
    ? up(options)
    : command === 'down'
      ? down(options)
      : Promise.reject(new Error('usage: node scripts/hosts.mjs up|down [--hosts N] [--preset local|dev] [--dir DIR]'))
  ).catch((err) => {
    console.error(`hosts: ${err.message}`);
    process.exit(1);
  });
}
