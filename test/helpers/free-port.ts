import { type AddressInfo, createServer } from 'node:net';

/** A loopback port free right now (the OS picks it; a process started next may bind it). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
