import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * A pid alone does not name a process: once it has exited the kernel hands the number to the next process
 * (after 32768 on a default Linux, within minutes on a busy machine; after a reboot at once). A signal sent to a
 * recorded pid, or a lock judged held because "that pid is alive", then hits or trusts a stranger. The pair
 * (pid, start time) does name one process for the life of the machine: the start time counts clock ticks (10 ms),
 * and a pid comes back only after the whole pid space has gone round, never within one tick.
 */
export interface ProcessIdentity {
  pid: number;
  /** The kernel's start time of the process (clock ticks since boot, /proc/PID/stat field 22); null where unknown. */
  startedAt: string | null;
}

/** /proc/PID/stat's start time; 'unreadable' where /proc exists but hides the process (hidepid, another user). */
function readStartTime(pid: number): string | null | 'unreadable' {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'unreadable';
  }
  // Field 2 is the command name in parentheses and may hold spaces or ')': count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? 'unreadable';
}

/** The start time of `pid`, or null when no such process exists, it cannot be read, or there is no /proc. */
export function processStartTime(pid: number): string | null {
  const t = readStartTime(pid);
  return t === 'unreadable' ? null : t;
}

/** This process, or a child just spawned (its pid cannot be reused before it has been reaped). */
export function identify(pid: number): ProcessIdentity {
  return { pid, startedAt: processStartTime(pid) };
}

function pidAnswers(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True while the very process of `id` runs. Without a start time (a record written by an older version, or a
 * system without /proc) it falls back to "some process has this pid", the only test there is.
 */
export function stillRunning(id: ProcessIdentity): boolean {
  if (!Number.isInteger(id.pid) || id.pid <= 0) return false;
  if (id.startedAt === null) return pidAnswers(id.pid);
  const now = readStartTime(id.pid);
  // Hidden from us, or no /proc here at all: the pid is all there is to go by.
  if (now === 'unreadable' || (now === null && !hasProc())) return pidAnswers(id.pid);
  return now === id.startedAt;
}

let procSeen: boolean | null = null;
function hasProc(): boolean {
  procSeen ??= processStartTime(process.pid) !== null;
  return procSeen;
}

/** Sends `signal` only if the process of `id` still runs; false when it is gone (never a stranger that took its pid). */
export function signalProcess(id: ProcessIdentity, signal: NodeJS.Signals): boolean {
  if (!stillRunning(id)) return false;
  try {
    process.kill(id.pid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** A lock file's text: `pid startTime` (the start time left out where unknown). */
export function formatLockOwner(id: ProcessIdentity = identify(process.pid)): string {
  return id.startedAt === null ? String(id.pid) : `${id.pid} ${id.startedAt}`;
}

/** Reads what formatLockOwner wrote, or a bare pid (a lock of an older version); null for anything else. */
export function parseLockOwner(text: string): ProcessIdentity | null {
  const m = /^(\d+)(?: (\d+))?\s*$/.exec(text.trim());
  if (!m) return null;
  return { pid: Number(m[1]), startedAt: m[2] ?? null };
}

/**
 * Takes the lock file `file` for this process unless a live process holds it: returns that holder's pid (nothing
 * written), or null once the lock is ours. A lock of a process that is gone, or whose pid another process now has
 * (after a kill -9 and a reboot the old pid is often some other program's), is stale and taken over.
 */
export function claimLockFile(file: string): number | null {
  if (existsSync(file)) {
    const owner = parseLockOwner(readFileSync(file, 'utf8'));
    if (owner && owner.pid !== process.pid && stillRunning(owner)) return owner.pid;
  }
  writeFileSync(file, formatLockOwner(), { mode: 0o600 });
  return null;
}
