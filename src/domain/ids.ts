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
  | 'act';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Prefixed random id: a time part first so ids sort roughly by creation (handy in logs and keyset paging),
 * then 80 random bits so they cannot be guessed.
 */
export function newId(prefix: IdPrefix): string {
  const time = Date.now().toString(36).padStart(9, '0');
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[pool[poolAt++]! % 36];
  return `${prefix}_${time}${rand}`;
}

// The same CSPRNG bytes, drawn 4 KB at a time: one call into the kernel's generator per 256 ids instead of one
// per id (a fan-out to 1,000 Slaves makes thousands of ids; so does every request). Each byte is used once.
const pool = Buffer.alloc(4096);
let poolAt = pool.length;
