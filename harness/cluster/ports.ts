// Free TCP ports on the loopback interface, so that several control planes (or other
// software on the machine) never collide on fixed ports.
import { createServer, type Server } from 'node:net';

function listenOnFreePort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('could not determine the port the kernel assigned'));
        return;
      }
      resolve({ server, port: address.port });
    });
  });
}

/**
 * Asks the kernel for `count` distinct free ports. All listeners stay open until every port is
 * known, so the ports differ from each other; there is still a short window in which another
 * process could take one before our server binds it, which the readiness checks would report.
 */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const listeners: { server: Server; port: number }[] = [];
  try {
    for (let index = 0; index < count; index += 1) listeners.push(await listenOnFreePort());
    return listeners.map((listener) => listener.port);
  } finally {
    await Promise.all(
      listeners.map(
        (listener) => new Promise<void>((resolve) => listener.server.close(() => resolve())),
      ),
    );
  }
}
