import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  formatLockOwner,
  identify,
  parseLockOwner,
  processStartTime,
  signalProcess,
  stillRunning,
} from './process-identity.js';

const sleeper = () => spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });

/** Root may set the kernel's last pid, so the next process gets a pid of its choice (CI runs as root). */
const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';
const canSetNextPid = (() => {
  try {
    accessSync(NS_LAST_PID, constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

describe('a process named by pid and start time', () => {
  it('knows this process, and not the same pid with another start time (a pid handed to a new process)', () => {
    const me = identify(process.pid);
    expect(me.startedAt).toMatch(/^\d+$/);
    expect(stillRunning(me)).toBe(true);
    expect(stillRunning({ pid: process.pid, startedAt: String(Number(me.startedAt) + 1) })).toBe(false);
    // A record without a start time (an older version's) can only be judged by its pid.
    expect(stillRunning({ pid: process.pid, startedAt: null })).toBe(true);
    expect(stillRunning({ pid: 0, startedAt: null })).toBe(false);
  });

  it('signals the process it names, never another that has its pid, and nothing once it has exited', async () => {
    const child = sleeper();
    const id = identify(child.pid!);
    expect(id.startedAt).toBe(processStartTime(child.pid!));
    // The pid is alive but the start time is not this process's: as if the pid had been recycled.
    expect(signalProcess({ pid: child.pid!, startedAt: '1' }, 'SIGKILL')).toBe(false);
    expect(child.exitCode === null && child.signalCode === null).toBe(true);
    const gone = once(child, 'exit');
    expect(signalProcess(id, 'SIGKILL')).toBe(true);
    await gone;
    expect(stillRunning(id)).toBe(false);
    expect(signalProcess(id, 'SIGKILL')).toBe(false);
  });

  // What a long run does to a pid by wrapping the pid space, done at once by setting the kernel's last pid.
  it.skipIf(!canSetNextPid)(
    'a pid handed to a new process after the first exited: the old identity signals nothing',
    async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        const first = sleeper();
        const id = identify(first.pid!);
        // Start times count 10 ms ticks: the second must start in a later tick, as a wrapped pid always does.
        await new Promise((r) => setTimeout(r, 50));
        first.kill('SIGKILL');
        await once(first, 'exit');
        writeFileSync(NS_LAST_PID, String(first.pid! - 1));
        const second = sleeper();
        try {
          // Another process of the machine may have taken the pid first: try again.
          if (second.pid !== first.pid) continue;
          // What the old check said: "kill(pid, 0) answers, so it is still running".
          expect(() => process.kill(first.pid!, 0)).not.toThrow();
          expect(stillRunning(id)).toBe(false);
          expect(signalProcess(id, 'SIGKILL')).toBe(false);
          expect(stillRunning(identify(second.pid!))).toBe(true);
          return;
        } finally {
          second.kill('SIGKILL');
        }
      }
      throw new Error('no pid came back in 20 tries');
    },
  );

  it('writes a lock owner as pid and start time, and reads a bare pid of an older lock', () => {
    const me = identify(process.pid);
    expect(parseLockOwner(formatLockOwner(me))).toEqual(me);
    expect(parseLockOwner('1234\n')).toEqual({ pid: 1234, startedAt: null });
    expect(parseLockOwner('')).toBeNull();
    expect(parseLockOwner('12ab')).toBeNull();
  });
});
