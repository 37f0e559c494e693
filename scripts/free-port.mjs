// A TCP port nothing listens on at the moment, on 127.0.0.1 (the kernel's pick), for servers the tests,
// benchmarks and scripts start.
import { createServer } from 'node:net';

export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}
