import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, relative, isAbsolute } from 'node:path';

/**
 * Encrypts broker credentials (passwords, OAuth tokens) and webhook secrets at rest with AES-256-GCM.
 * Format: v2.<key id>.<iv>.<tag>.<ciphertext> (base64url each), where the key id names the key of the ring
 * that sealed it, so during a key rotation values sealed under the old key and the new one both open. The
 * older v1.<iv>.<tag>.<ciphertext> carries no key id and is tried with every key of the ring.
 */
export class CredentialBox {
  private readonly keys: Map<string, Buffer>;
  readonly currentKeyId: string;

  /** `previous`: keys still accepted for opening (a rotation in progress); sealing always uses `current`. */
  constructor(
    private readonly key: Buffer,
    previous: Buffer[] = [],
  ) {
    for (const k of [key, ...previous]) if (k.length !== 32) throw new Error('credential key must be 32 bytes');
    this.currentKeyId = keyId(key);
    this.keys = new Map([key, ...previous].map((k) => [keyId(k), k]));
  }

  seal(value: unknown): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return [
      'v2',
      this.currentKeyId,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      ct.toString('base64url'),
    ].join('.');
  }

  open<T = Record<string, unknown>>(sealed: string): T {
    const parts = sealed.split('.');
    if (parts[0] === 'v2' && parts.length === 5) {
      const k = this.keys.get(parts[1]!);
      if (!k)
        throw new Error(
          `credential sealed under key ${parts[1]}, which is not configured (the key was changed without a rotation?)`,
        );
      return decrypt<T>(k, parts[2]!, parts[3]!, parts[4]!);
    }
    if (parts[0] === 'v1' && parts.length === 4) {
      let last: unknown;
      for (const k of this.keys.values()) {
        try {
          return decrypt<T>(k, parts[1]!, parts[2]!, parts[3]!);
        } catch (err) {
          last = err;
        }
      }
      throw last instanceof Error ? last : new Error('credential does not open with any configured key');
    }
    throw new Error('unrecognised credential format');
  }

  /**
   * Keys for another purpose derived from this ring (HKDF-SHA256, `purpose` as info), the current key's first:
   * every process sharing the credential key derives the same ones, and none reveals the credential key.
   */
  derivedKeys(purpose: string): Buffer[] {
    return [this.key, ...[...this.keys.values()].filter((k) => k !== this.key)].map((k) =>
      Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), `copytrade ${purpose}`, 32)),
    );
  }

  /** Sealed under the current key (a rotation leaves it alone). */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`v2.${this.currentKeyId}.`);
  }
}

function decrypt<T>(key: Buffer, iv: string, tag: string, ct: string): T {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const pt = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]);
  return JSON.parse(pt.toString('utf8')) as T;
}

/** A short public name of a key (not a secret: 48 bits of its SHA-256). */
export const keyId = (key: Buffer): string => createHash('sha256').update(key).digest('base64url').slice(0, 8);

const decodeKey = (text: string, what: string): Buffer => {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${what} must be 32 bytes, base64-encoded (e.g. \`openssl rand -base64 32\`)`);
  return key;
};

export interface KeyRing {
  current: Buffer;
  previous: Buffer[];
  /** Where the current key came from; `file` is set for a key file. */
  source: 'env' | 'file' | 'memory';
  file: string | null;
}

/**
 * The key file holds one base64 key per line: the current key first, then keys still accepted while a
 * rotation is under way. Created (0600) with one fresh key on first use.
 */
export function readKeyFile(file: string): Buffer[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((l, i) => decodeKey(l, `${file} line ${i + 1}`));
}

/** Replaces the key file in one rename, so a crash leaves the old ring or the new one, never half of either. */
export function writeKeyFile(file: string, keys: Buffer[]): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${keys.map((k) => k.toString('base64')).join('\n')}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/**
 * Key from COPYTRADE_SECRET_KEY (plus COPYTRADE_SECRET_KEY_PREVIOUS during a rotation), else from the key file
 * (created with a fresh key on first use), else a throwaway key for the in-memory store.
 */
export function loadCredentialKeys(opts: {
  configured?: string | undefined;
  previous?: string | undefined;
  keyFile: string | null;
}): KeyRing {
  if (opts.configured) {
    const previous = (opts.previous ?? '')
      .split(',')
      .filter((s) => s.trim() !== '')
      .map((s, i) => decodeKey(s, `COPYTRADE_SECRET_KEY_PREVIOUS entry ${i + 1}`));
    return { current: decodeKey(opts.configured, 'COPYTRADE_SECRET_KEY'), previous, source: 'env', file: null };
  }
  if (!opts.keyFile) return { current: randomBytes(32), previous: [], source: 'memory', file: null }; // nothing outlives the process anyway
  if (!existsSync(opts.keyFile)) writeKeyFile(opts.keyFile, [randomBytes(32)]);
  const [current, ...previous] = readKeyFile(opts.keyFile);
  if (!current) throw new Error(`${opts.keyFile} holds no key`);
  return { current, previous, source: 'file', file: opts.keyFile };
}

/** True when `file` lies inside `dir`: a copy or backup of the data dir then carries the key that opens it. */
export function insideDir(file: string, dir: string): boolean {
  const rel = relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
