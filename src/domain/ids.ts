import { randomFillSync } from 'node:crypto';

export type IdPrefix =
  | 'usr'
  | 'acc'
  | 'grp'
  | 'trd'
  | 'int'
  | 'key'
  | 'tok'
  | 'req'
  | 'job'
  | 'evt'
  | 'rul'
  | 'whe'
  | 'wha'
  | 'act'
  | 'btk'
  | 'alc'
  | 'ald'
  | 'agr';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Prefixed random id: a time part first so ids sort roughly by creation (handy in logs and keyset paging),
 * then 80 random bits so they cannot be guessed.
 */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now !== timeAt) {
    timeAt = now;
    time = now.toString(36).padStart(9, '0');
  }
  if (poolAt + 16 > pool.length) refill();
  const rand = pool.toString('latin1', poolAt, (poolAt += 16));
  return `${prefix}_${time}${rand}`;
}

// The same CSPRNG bytes, drawn 4 KB at a time: one call into the kernel's generator per 256 ids instead of one
// per id (a fan-out to 1,000 Slaves makes thousands of ids; so does every request). Each byte is used once, turned
// into its character (byte % 36, as always) when drawn, so an id's 16 characters are one slice of the pool, not 16
// concatenations (0.37 against 0.13 us an id).
const pool = Buffer.alloc(4096);
let poolAt = pool.length;
const CODES = Buffer.from(ALPHABET, 'latin1');

function refill(): void {
  randomFillSync(pool);
  for (let i = 0; i < pool.length; i++) pool[i] = CODES[pool[i]! % 36]!;
  poolAt = 0;
}

// The time part of the last id: a fan-out's ids mostly share their millisecond.
let timeAt = -1;
let time = '';
