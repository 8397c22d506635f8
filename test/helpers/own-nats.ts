import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export interface OwnNats {
  url: string;
  /** Stops the server (SIGTERM, waits for its exit) and starts it again on the same port and JetStream dir. */
  restart(): Promise<void>;
  destroy(): Promise<void>;
}

const BINARIES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];
export const ownNatsBinary = (): string | null => BINARIES.find((b) => existsSync(b)) ?? null;

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/**
 * A NATS server (JetStream on) of the test's own on a free loopback port, never the machine's shared one, so a test
 * may restart it under the processes that use it.
 */
export async function startOwnNats(): Promise<OwnNats> {
  const bin = ownNatsBinary();
  if (!bin) throw new Error(`no nats-server binary (looked in ${BINARIES.join(', ')})`);
  const dir = mkdtempSync(join(tmpdir(), 'ct-own-nats-'));
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const start = async () => {
    proc = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'js')], { stdio: 'ignore' });
    const end = Date.now() + 15_000;
    while (!(await portOpen(port))) {
      if (Date.now() > end) throw new Error(`nats-server did not open 127.0.0.1:${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async () => {
    const p = proc;
    proc = null;
    if (!p || p.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGTERM');
    });
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    async restart() {
      await stop();
      await start();
    },
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
