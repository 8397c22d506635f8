import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Encrypts broker credentials (passwords, OAuth tokens) at rest with AES-256-GCM. The key comes from
 * configuration (COPYTRADE_SECRET_KEY, 32 bytes base64) or from a generated key file readable only by us.
 * Format: v1.<iv>.<tag>.<ciphertext>, base64url each; the version leaves room for key rotation.
 */
export class CredentialBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('credential key must be 32 bytes');
  }

  seal(value: unknown): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open<T = Record<string, unknown>>(sealed: string): T {
    const [v, iv, tag, ct] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || !ct) throw new Error('unrecognised credential format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const pt = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]);
    return JSON.parse(pt.toString('utf8')) as T;
  }
}

/** Key from config, else from the key file (created with mode 0600 on first use). */
export function loadCredentialKey(opts: { configured?: string | undefined; keyFile: string | null }): Buffer {
  if (opts.configured) {
    const key = Buffer.from(opts.configured, 'base64');
    if (key.length !== 32) throw new Error('COPYTRADE_SECRET_KEY must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)');
    return key;
  }
  if (!opts.keyFile) return randomBytes(32); // in-memory store: nothing outlives the process anyway
  if (existsSync(opts.keyFile)) return Buffer.from(readFileSync(opts.keyFile, 'utf8').trim(), 'base64');
  mkdirSync(dirname(opts.keyFile), { recursive: true });
  const key = randomBytes(32);
  writeFileSync(opts.keyFile, key.toString('base64') + '\n', { mode: 0o600 });
  chmodSync(opts.keyFile, 0o600);
  return key;
}
