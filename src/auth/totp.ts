import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/** RFC 6238 with the parameters every authenticator app assumes: SHA-1, 6 digits, 30 s steps. */
const PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** One step either side: a phone clock a little off, or a code typed as it rolled over. */
const WINDOW = 1;
const ISSUER = 'copytrade';

/** A fresh 160-bit secret (RFC 4226's recommended length), base32 as authenticator apps take it. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

/** The otpauth:// URI an authenticator app reads (from a QR code or typed). */
export const otpauthUri = (secret: string, account: string): string =>
  new TOTP({ ...PARAMS, issuer: ISSUER, label: account, secret: Secret.fromBase32(secret) }).toString();

/**
 * The time step of a code that is right now (within the window), or null. A step at or before `lastStep` is
 * refused: each code is good once (RFC 6238 section 5.2), so one seen over a shoulder cannot be used again.
 */
export function acceptedStep(secret: string, code: string, nowMs: number, lastStep: number | null): number | null {
  const token = code.replace(/\s/g, '');
  if (!/^[0-9]{6}$/.test(token)) return null;
  const totp = new TOTP({ ...PARAMS, secret: Secret.fromBase32(secret) });
  const delta = totp.validate({ token, timestamp: nowMs, window: WINDOW });
  if (delta === null) return null;
  const step = totp.counter({ timestamp: nowMs }) + delta;
  return lastStep !== null && step <= lastStep ? null : step;
}

/** The code of a step (tests, and the CLI's check of a freshly enrolled secret). */
export const totpCode = (secret: string, nowMs: number): string =>
  new TOTP({ ...PARAMS, secret: Secret.fromBase32(secret) }).generate({ timestamp: nowMs });

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const RECOVERY_CODES = 10;

/** Ten codes of 10 characters (about 49 bits each) from an alphabet without look-alikes, shown as xxxxx-xxxxx. */
export function newRecoveryCodes(n = RECOVERY_CODES): string[] {
  return Array.from({ length: n }, () => {
    const bytes = randomBytes(10);
    const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** What is stored of a recovery code: its SHA-256, after the spaces, dashes and case a person may type differently. */
export const recoveryCodeHash = (code: string): string =>
  createHash('sha256').update(code.toLowerCase().replace(/[\s-]/g, '')).digest('hex');

/** A recovery code as typed (so sign-in can tell it from a TOTP code). */
export const looksLikeRecoveryCode = (code: string): boolean =>
  /^[a-z0-9]{10}$/.test(code.toLowerCase().replace(/[\s-]/g, '')) && !/^[0-9]+$/.test(code.replace(/[\s-]/g, ''));
