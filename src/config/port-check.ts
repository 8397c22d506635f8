import { createServer } from 'node:net';
import { AppError } from '../domain/errors.js';

/**
 * Binds and releases each requested port before the service opens or writes anything, so a taken port fails in
 * milliseconds with a clear message instead of after the store, the simulator and the demo seeding (about 20 s
 * on a busy machine). Port 0 (any free port) is never taken. The real listen still reports a port lost in
 * between; this only moves the common case first.
 */
export async function assertPortsFree(host: string, ports: Array<number | null>): Promise<void> {
  for (const port of ports) {
    if (!port) continue;
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'EADDRINUSE') {
          reject(
            new AppError(
              'port_in_use',
              `port ${port} on ${host} is already in use (another copytrade or another program): stop it, or pick another port with --port N (npm start -- --port N)`,
            ),
          );
        } else if (err.code === 'EACCES') {
          reject(
            new AppError(
              'port_in_use',
              `port ${port} on ${host} needs privileges this user does not have: pick a port above 1023 with --port N`,
            ),
          );
        } else reject(err);
      });
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
    });
  }
}
