import { PLUGIN_KINDS } from './new/kinds.js';

function componentUsage(command: string, what: string): string {
  return `usage: skiff ${command} [--server URL[,URL…]] [--preset NAME] [--config FILE] [--data-dir DIR] [--kubeconfig FILE] [--leader-elect=false] [--log-level LEVEL]

Runs ${what} of the preset and config, talking to the API servers over HTTPS as
<data-dir>/${command}.kubeconfig (skiff apiserver writes it). With several API servers, a connection failure moves
on to the next. Leader election (a Lease in kube-system) lets several copies run: one works, the others wait.
  --server        API server URLs, comma-separated or repeated (default: the kubeconfig's server)
  --preset        preset name or package (default: dev, or the config file's)
  --config        config file (default: skiff.config.* / .skiffrc* / package.json#skiff in this folder)
  --data-dir      the data dir holding ${command}.kubeconfig (default: ./.skiff)
  --kubeconfig    another kubeconfig to use
  --leader-elect  true (default) or false: =false when only one copy runs
  --log-level     trace|debug|info|warn|error|silent (default: info; logs go to stderr)
  -h, --help      print this help`;
}

/** One line per command for `skiff help`, and each command's own usage for `skiff <command> --help`. */
export const COMMANDS = Object.freeze({
  up: {
    summary: 'start a whole cluster in this process',
    usage: `usage: skiff up [--preset NAME] [--config FILE] [--data-dir DIR] [--host IP] [--port N] [--nodes N] [--advertise-address IP] [--log-level LEVEL] [--log-format json|text]

Starts a whole cluster in this process, printing each step as it goes, and writes <data-dir>/admin.kubeconfig.
The data dir and everything in it are readable by the owner only (0700 / 0600).
  --preset     preset name or package (default: dev, or the config file's)
  --config     config file (default: skiff.config.* / .skiffrc* / package.json#skiff in this folder)
  --data-dir   where state lives (default: ./.skiff)
  --host       the address the API server listens on (default: 127.0.0.1; 0.0.0.0 for every interface,
               which nodes joining from other machines need)
  --port       API server port (default: 6443; 0 picks a free one)
  --nodes      number of simulated nodes (default: 1)
  --advertise-address  this machine's address for pods and other machines: the nodes' InternalIP
               (default: the address of the interface the default route leaves by)
  --log-level  trace|debug|info|warn|error|silent (default: info); given, the logs go to stderr
  --log-format json|text: the logs go to stderr, as JSON lines or as text for people
               (default: JSON lines in <data-dir>/logs/skiff.log, 0600, moved to skiff.log.1 at 10 MiB)
  -h, --help   print this help`,
  },
  status: {
    summary: 'summarise a running cluster: version, preset, nodes, pods, readiness, plugins',
    usage: `usage: skiff status [--data-dir DIR] [--config FILE]

Asks the cluster of a data dir (through its admin.kubeconfig) how it is: the server and its version, the preset,
nodes Ready, pods by phase, failing readiness checks, where its logs go and the plugins it loaded, with their taps
per hook (from <data-dir>/up.json, which skiff up writes once ready). When nothing answers within 2s it says so in
one line and exits 1.
  --data-dir   the cluster's data dir (default: the config file's, else ./.skiff)
  --config     the cluster's config file (default: found in this folder, as skiff up does)
  -h, --help   print this help`,
  },
  plugins: {
    summary: 'list the plugins of a cluster and the taps of each hook in call order',
    usage: `usage: skiff plugins [--data-dir DIR] [--config FILE] [--preset NAME] [--json]

Lists the plugins a cluster loads (name, version, the kernel versions it supports) and, for each hook, its taps in
the order the hook calls them: stage, plugin, tap name; for the registration hooks (controllers, scheduler plugins,
runtimes…), the names each tap registers. It reads the preset and config as skiff up does, with the preset the last
skiff up in the data dir used, and builds the kernel without starting it: the cluster may be running or stopped.
  --data-dir   the cluster's data dir (default: the config file's, else ./.skiff)
  --config     the cluster's config file (default: found in this folder, as skiff up does)
  --preset     preset name or package (default: the last skiff up's, else the config file's, else dev)
  --json       the same as JSON
  -h, --help   print this help`,
  },
  join: {
    summary: 'make this machine a node of a cluster on another machine',
    usage: `usage: skiff join https://HOST:PORT[,https://HOST2:PORT…] [--token ID.SECRET --ca-cert-hash sha256:HASH] [--preset dev|local] [--data-dir DIR] [--node-name NAME] [--node-ip IP] [--log-level LEVEL]

Runs a node (kubelet, runtime, pod network, service proxy) of the cluster at HOST:PORT in this process, as
\`skiff token create\` on the control plane prints it. Name several API servers of one cluster, comma-separated, and
the node fails over between them. The first time it checks the cluster's CA against the hash,
gets the node's client certificate through a CertificateSigningRequest (TLS bootstrap) and writes
<data-dir>/kubelet.kubeconfig; later starts reuse that and need no token.
  --token         a bootstrap token (skiff token create); the first join only
  --ca-cert-hash  sha256 of the cluster CA's public key (skiff token create prints it); the first join only
  --preset        the node's kind: dev (simulated containers, default) or local (containerd, CNI bridge, nftables; needs root)
  --data-dir      where the node keeps its state and credentials (default: ./.skiff)
  --node-name     the Node's name (default: this machine's host name)
  --node-ip       the node's InternalIP (default: the address of the interface the default route leaves by)
  --log-level     trace|debug|info|warn|error|silent (default: info)
  -h, --help      print this help`,
  },
  apiserver: {
    summary: 'run only the API server (and its store) of a cluster',
    usage: `usage: skiff apiserver [--preset NAME] [--config FILE] [--data-dir DIR] [--host IP] [--port N] [--advertise-address IP] [--nodes N] [--log-level LEVEL] [--log-format json|text]

Runs the plugins of the preset and config that belong with the API server: the store, @skiff/apiserver and the
request path (authentication, authorization, admission, API extensions, flow control, audit, encryption…).
Writes <data-dir>/admin.kubeconfig, and controller-manager.kubeconfig and scheduler.kubeconfig (client certificates
for system:kube-controller-manager and system:kube-scheduler from the cluster CA) for skiff controller-manager and
skiff scheduler. A data dir holding a copy of another API server's pki/ keeps that CA and issues this server's own
serving certificate.
  --preset     preset name or package (default: dev, or the config file's)
  --config     config file (default: skiff.config.* / .skiffrc* / package.json#skiff in this folder)
  --data-dir   where state, PKI and kubeconfigs live (default: ./.skiff)
  --host       the address the API server listens on (default: 127.0.0.1; 0.0.0.0 for every interface)
  --port       API server port (default: 6443; 0 picks a free one)
  --advertise-address  this machine's address for pods and other machines (default: the default route's interface)
  --nodes      also run the preset's kubelets, with this many simulated nodes (default: 0, none)
  --log-level  trace|debug|info|warn|error|silent (default: info; logs go to stderr)
  --log-format json (default) or text (lines for people)
  -h, --help   print this help`,
  },
  'controller-manager': {
    summary: 'run only the controller manager, against API servers over HTTPS',
    usage: componentUsage('controller-manager', 'the controller manager and the controller plugins'),
  },
  scheduler: {
    summary: 'run only the scheduler, against API servers over HTTPS',
    usage: componentUsage('scheduler', 'the scheduler and the scheduler plugins'),
  },
  token: {
    summary: 'make a bootstrap token and print the skiff join command that uses it',
    usage: `usage: skiff token create [--ttl DURATION] [--description TEXT] [--data-dir DIR] [--config FILE]

Creates a bootstrap token (Secret bootstrap-token-<id> in kube-system) through the admin kubeconfig of a running
cluster and prints the skiff join command for another machine: the published server, the token, the CA's hash.
  --ttl          how long the token is valid: 24h (default), 90m, 3600s, or 0 for never
  --description  stored with the token
  --data-dir     the cluster's data dir, holding admin.kubeconfig (default: the config file's, else ./.skiff)
  --config       the cluster's config file (default: found in this folder, as skiff up does)
  -h, --help     print this help`,
  },
  trace: {
    summary: 'show what happened for a request and everything it caused: hooks, plugins, store, controllers, scheduler, kubelets',
    usage: `usage: skiff trace (KIND/NAME [-n NAMESPACE] | --next [--any] | --id ID | --list) [--json] [--html FILE] [--data-dir DIR] [--config FILE]

Reads the spans the API server records (docs/tracing.md) through the admin kubeconfig of a running cluster and
prints a timeline: each step with its offset, its duration, the time it spent outside its children, and who did it.
  KIND/NAME       the traces that touched an object and what it owns (deployment/web: its ReplicaSets and Pods);
                  needs a cluster tracing every request (config trace.mode "on") or an earlier --next
  --next          arm a trace for the next create, update, patch or delete (--any: any request), wait for it and
                  for what it causes to settle, then print it
  --id            a trace by id; --list the traces held
  -n, --namespace the object's namespace (default: default)
  --json          the spans as JSON; --html FILE writes a one-file page with an SVG timeline
  --timeout       seconds --next waits for a request (default 120); --settle seconds of quiet that end it (default 3)
  --data-dir      the cluster's data dir, holding admin.kubeconfig (default: the config file's, else ./.skiff)
  --config        the cluster's config file (default: found in this folder, as skiff up does)
  -h, --help      print this help`,
  },
  new: {
    summary: 'write a ready plugin package (admission, scheduler, authenticator, authorizer, controller)',
    usage: `usage: skiff new <kind> <name> [--dir DIR]

Writes skiff-plugin-<name>/, a plugin package that installs, builds and passes its tests on its own:
a working example plugin of that kind in TypeScript, a test against @skiff/testing, a README.
It never writes into a folder that is not empty. Then: cd skiff-plugin-<name> && npm install && npm test
  <kind>       one of
${Object.entries(PLUGIN_KINDS)
  .map(([kind, { summary }]) => `               ${kind.padEnd(15)}${summary}`)
  .join('\n')}
  <name>       lower-case letters, digits and dashes (deny-label), or @scope/<name> for a scoped package
  --dir        where to create skiff-plugin-<name>/ (default: this folder)
  -h, --help   print this help`,
  },
  image: {
    summary: "load image archives into a running local cluster's nodes",
    usage: `usage: skiff image import FILE... [--data-dir DIR] [--config FILE] [--node NAME]

Imports OCI or docker-archive image tars into the containerd of each node of a running cluster started with
the local preset (or of one node), for machines without a registry. Pods then use the archive's image names.
  --data-dir   the cluster's data dir (default: the config file's, else ./.skiff)
  --config     the cluster's config file (default: found in this folder, as skiff up does)
  --node       only this node (default: every node)
  -h, --help   print this help`,
  },
  kubeconfig: {
    summary: 'print a kubeconfig for a new user, signed by the cluster CA',
    usage: `usage: skiff kubeconfig user --name NAME [--group GROUP]... [--data-dir DIR] [--config FILE] [--expiration-seconds N] [--server URL]

Prints a kubeconfig whose client certificate the cluster CA signs: CN the user's name, O each group (as
kubeadm kubeconfig user does). The cluster must run @skiff/plugin-authn-x509 to accept it; what the user
may do is up to the authorizers. The key is in the output only: keep it owner-only (> file; chmod 600 file).
  --name                the user's name (required)
  --group               a group of the user; repeat for several
  --data-dir            the cluster's data dir, holding pki/ca.crt and pki/ca.key (default: the config file's, else ./.skiff)
  --config              the cluster's config file (default: found in this folder, as skiff up does)
  --expiration-seconds  how long the certificate is valid (default: a year; never past the CA's expiry)
  --server              the API server URL (default: the one in <data-dir>/admin.kubeconfig)
  -h, --help            print this help`,
  },
  store: {
    summary: "copy a cluster's objects out of its store, or into an empty one (LMDB to etcd)",
    usage: `usage: skiff store export [--output FILE] [--config FILE] [--preset NAME] [--data-dir DIR] [--log-level LEVEL]
       skiff store import FILE [--config FILE] [--preset NAME] [--data-dir DIR] [--log-level LEVEL]

Opens the cluster's store as the preset and config set it up (LMDB in <data-dir>/store, or etcd), with its
encryption at rest, and nothing else of the cluster.
export writes every object under /registry/ as JSON lines, read from one snapshot revision: a header line
{"kind":"SkiffStoreExport","version":1,"revision":R,"objects":N,…}, then {"key":…,"object":…} per object.
Secrets are written in plain form (opened with the cluster's encryption key): the file is as secret as they are.
--output creates it mode 0600 (owner only) and only once it is whole; on stdout, redirect into such a file.
import checks the whole file first, refuses a store that already holds objects, then creates each object at its
key with everything but its resourceVersion (uids, ownerReferences, status are kept) and prints the counts.
To move a cluster from LMDB to etcd: stop it, export with its config, import with a config that names
@skiff/plugin-store-etcd and the same data dir (the same CA and encryption key), then start on that config.
LMDB belongs to one process: stop the cluster before export or import on LMDB. On etcd both can run beside it.
  --output     export: the file to write, mode 0600 (default: stdout)
  --config     the cluster's config file (default: skiff.config.* / .skiffrc* / package.json#skiff in this folder)
  --preset     preset name or package (default: dev, or the config file's)
  --data-dir   the cluster's data dir: the LMDB store, the encryption key (default: ./.skiff, or the config file's)
  --log-level  trace|debug|info|warn|error|silent (default: warn; logs go to stderr)
  -h, --help   print this help`,
  },
  version: {
    summary: 'print the skiff version',
    usage: `usage: skiff version

Prints the version of the skiff command (also: skiff --version).`,
  },
  help: {
    summary: "print this help, or a command's",
    usage: `usage: skiff help [COMMAND]

Prints the list of commands, or the usage of COMMAND (the same as skiff COMMAND --help).`,
  },
});

export type CommandName = keyof typeof COMMANDS;

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

export const USAGE = `usage: skiff <command> [options]

commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(19)}${summary}`)
  .join('\n')}

skiff <command> --help prints a command's options.`;
