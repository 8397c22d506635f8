import { createHash, randomBytes } from 'node:crypto';

/**
 * Bearer secrets (access tokens, API keys): a typed prefix so a leaked one is recognisable (secret
 * scanners), 32 random bytes, and a CRC32 checksum so a typo is refused without a database lookup.
 * Only the SHA-256 is stored: the value is shown once.
 */
export const ACCESS_TOKEN_PREFIX = 'ctat_';
export const API_KEY_PREFIX = 'ctk_';
/** The password step of a sign-in waiting for its second factor; and an email verification link's token. */
export const CHALLENGE_PREFIX = 'ctch_';
export const VERIFY_PREFIX = 'ctev_';

export function generateSecret(prefix: string): string {
  const body = randomBytes(32).toString('base64url');
  return `${prefix}${body}${crc32Base36(prefix + body)}`;
}

/** True when the secret has the prefix and its checksum matches (cheap pre-check before the hash lookup). */
export function wellFormed(secret: string, prefix: string): boolean {
  if (!secret.startsWith(prefix) || secret.length !== prefix.length + 43 + 7) return false;
  const body = secret.slice(prefix.length, prefix.length + 43);
  return secret.endsWith(crc32Base36(prefix + body));
}

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** What lists show: enough to tell keys apart, never enough to use one. */
export const displayPrefix = (secret: string, prefix: string): string => secret.slice(0, prefix.length + 6);

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32Base36(s: string): string {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(s)) crc = TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return ((crc ^ 0xffffffff) >>> 0).toString(36).padStart(7, '0');
}
