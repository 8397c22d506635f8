import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** `nats://127.0.0.1:<port>`-style address of the proxy (scheme given by the caller). */
  port: number;
  /** Connections currently piped through. */
  open(): number;
  /** Drops every piped connection and refuses new ones until restore(): a network cut, server untouched. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/**
 * A TCP relay on loopback between the processes under test and a real server, so a test can cut their
 * connections and restore them without touching the machine's server (other tests use it).
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let refusing = false;
  const server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    open: () => pairs.size,
    cut() {
      refusing = true;
      for (const [a, b] of [...pairs]) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    restore() {
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        refusing = true;
        for (const [a, b] of pairs) {
          a.destroy();
          b.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
