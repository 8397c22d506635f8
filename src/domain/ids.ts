import { randomBytes } from 'node:crypto';

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
  const bytes = randomBytes(16);
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[bytes[i]! % 36];
  return `${prefix}_${time}${rand}`;
}
