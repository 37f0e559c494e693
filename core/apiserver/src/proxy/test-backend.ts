// A stand-in for a pod in tests of the proxy subresources: an HTTP server in a network namespace of its own,
// reached from the host through a veth pair at a private (global unicast) address, as pods are on the local
// preset. Root only, like the CNI tests.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

export interface TestBackend {
  /** The backend's address, as a pod's IP. */
  ip: string;
  /** Ports the echo server listens on. */
  ports: number[];
  close(): void;
}

/** The page `/html` serves: links to rewrite, and markup inside a script that must stay as it is. */
export const HTML_PAGE = `<!DOCTYPE html><a href="/rewriteme">test</a><script>var s = '<a href="/no">';</script><IMG SRC="pic.png" alt=x><link href='/x?a=1&amp;b=2'/>`;

/**
 * The echo server: answers every request with JSON {method, url, headers, bodyBytes, body} (body only when
 * short). `/redirect` and `/redirect-absolute` answer 302, `/html` and `/html-gzip` an HTML page with links, `/stream` sends "first" and holds the response open
 * until a request for `/release` comes, an upgrade request with `Upgrade: echo` is switched and echoed.
 */
const SERVER = `
const http = require('node:http');
let held = [];
const handler = (req, res) => {
  if (req.url === '/release') { for (const r of held) r.end('second'); held = []; return res.end('released'); }
  if (req.url === '/stream') { res.writeHead(200, { 'content-type': 'text/plain' }); res.write('first'); held.push(res); return; }
  if (req.url === '/html' || req.url === '/html-gzip') {
    const page = HTML_PAGE;
    const gzip = req.url === '/html-gzip';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    return res.end(gzip ? require('node:zlib').gzipSync(page) : page);
  }
  if (req.url === '/redirect') { res.writeHead(302, { location: '/elsewhere/x', 'access-control-allow-origin': '*' }); return res.end(); }
  if (req.url === '/redirect-absolute') { res.writeHead(302, { location: 'http://' + req.socket.localAddress + ':' + req.socket.localPort + '/abs/' }); return res.end(); }
  let bytes = 0; const chunks = [];
  req.on('data', (c) => { bytes += c.length; if (bytes <= 4096) chunks.push(c); });
  req.on('end', () => {
    const body = JSON.stringify({ method: req.method, url: req.url, port: req.socket.localPort, headers: req.headers, bodyBytes: bytes, body: bytes <= 4096 ? Buffer.concat(chunks).toString() : '' });
    res.writeHead(200, { 'content-type': 'application/json', 'x-backend': 'echo' });
    res.end(body);
  });
};
for (const port of PORTS) {
  const server = http.createServer(handler);
  server.on('upgrade', (req, socket, head) => {
    socket.write('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: echo\\r\\n\\r\\n');
    if (head.length) socket.write(head);
    socket.pipe(socket);
  });
  server.listen(port, '0.0.0.0');
}
`;

function run(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Starts the echo server in a new network namespace; resolves once every port accepts connections. */
export async function startTestBackend(ports: number[]): Promise<TestBackend> {
  const id = process.pid % 250;
  const netns = `skiff-proxy-${process.pid}`;
  const hostSide = `spx${process.pid}h`.slice(-15);
  const podSide = `spx${process.pid}p`.slice(-15);
  const hostIp = `10.253.${id}.1`;
  const ip = `10.253.${id}.2`;
  run('netns', 'add', netns);
  let server: ChildProcess | undefined;
  const close = () => {
    server?.kill();
    try {
      run('netns', 'del', netns);
    } catch {
      // already gone
    }
  };
  try {
    run('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', podSide);
    run('link', 'set', podSide, 'netns', netns);
    run('addr', 'add', `${hostIp}/30`, 'dev', hostSide);
    run('link', 'set', hostSide, 'up');
    run('netns', 'exec', netns, 'ip', 'addr', 'add', `${ip}/30`, 'dev', podSide);
    run('netns', 'exec', netns, 'ip', 'link', 'set', podSide, 'up');
    run('netns', 'exec', netns, 'ip', 'link', 'set', 'lo', 'up');
    const script = `const PORTS = ${JSON.stringify(ports)}; const HTML_PAGE = ${JSON.stringify(HTML_PAGE)};${SERVER}`;
    server = spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', script], { stdio: 'ignore' });
    for (const port of ports) await untilListening(ip, port);
  } catch (err) {
    close();
    throw err;
  }
  return { ip, ports, close };
}

async function untilListening(host: string, port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`the test backend does not listen on ${host}:${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
