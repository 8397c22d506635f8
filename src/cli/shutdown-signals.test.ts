import { describe, expect, it } from 'vitest';
import { shutdownOnSignals } from './shutdown-signals.js';

function harness() {
  const handlers = new Map<string, () => void>();
  const exits: number[] = [];
  const lines: string[] = [];
  const clock = { ms: 0 };
  const s = shutdownOnSignals({
    on: (sig, fn) => handlers.set(sig, fn),
    exit: (code) => exits.push(code),
    log: (_level, _fields, msg) => lines.push(msg),
    now: () => clock.ms,
    repeatWindowMs: 2000,
  });
  return { s, exits, lines, clock, send: (sig: string) => handlers.get(sig)!() };
}

describe('shutdownOnSignals', () => {
  it('closes on a signal, then exits 0', async () => {
    const h = harness();
    let closed = false;
    h.s.ready(async () => {
      closed = true;
    });
    h.send('SIGTERM');
    await expect.poll(() => h.exits).toEqual([0]);
    expect(closed).toBe(true);
  });

  it('a signal during the start waits for the start, then closes what it opened', async () => {
    const h = harness();
    h.send('SIGINT');
    expect(h.exits).toEqual([]);
    let closed = false;
    h.s.ready(async () => {
      closed = true;
    });
    await expect.poll(() => h.exits).toEqual([0]);
    expect(closed).toBe(true);
  });

  it('a second signal while the close hangs exits at once with 1', async () => {
    const h = harness();
    h.s.ready(() => new Promise<void>(() => undefined));
    h.send('SIGTERM');
    expect(h.exits).toEqual([]);
    h.clock.ms = 2500;
    h.send('SIGINT');
    expect(h.exits).toEqual([1]);
    expect(h.lines).toContain('second signal: exiting without finishing the shutdown');
  });

  it('a second signal during the start exits at once with 1', () => {
    const h = harness();
    h.send('SIGINT');
    h.clock.ms = 3000;
    h.send('SIGINT');
    expect(h.exits).toEqual([1]);
  });

  it('the same signal delivered twice at once (kill %1 under npm start) is one shutdown that finishes', async () => {
    const h = harness();
    let finish!: () => void;
    let closed = false;
    h.s.ready(
      () =>
        new Promise<void>((r) => {
          finish = () => {
            closed = true;
            r();
          };
        }),
    );
    h.send('SIGTERM');
    h.clock.ms = 5;
    h.send('SIGTERM');
    expect(h.exits).toEqual([]);
    finish();
    await expect.poll(() => h.exits).toEqual([0]);
    expect(closed).toBe(true);
  });

  it('a forced exit first runs the hooks that stop what the service started', () => {
    const h = harness();
    const order: string[] = [];
    h.s.onForcedExit(() => order.push('simulator stopped'));
    h.s.onForcedExit(() => {
      throw new Error('a hook that fails');
    });
    h.s.ready(() => new Promise<void>(() => undefined));
    h.send('SIGINT');
    h.clock.ms = 4000;
    h.send('SIGINT');
    expect(order).toEqual(['simulator stopped']);
    expect(h.exits).toEqual([1]);
  });

  it('a close that fails exits 1, not 0', async () => {
    const h = harness();
    h.s.ready(async () => {
      throw new Error('the store would not close');
    });
    h.send('SIGHUP');
    await expect.poll(() => h.exits).toEqual([1]);
  });
});
