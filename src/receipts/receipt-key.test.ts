import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadReceiptKey, ReceiptKeyMissing, rotateReceiptKey, verifyHead } from './receipt-key.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'ct-rk-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('receipt key file', () => {
  it('is created on first use with mode 0600 and read back as the same key', () => {
    const file = join(tmp(), 'keys', 'receipt.key');
    const k = loadReceiptKey(file, { create: true });
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = loadReceiptKey(file, { create: false });
    expect(again.current.keyId).toBe(k.current.keyId);
    const sig = k.sign('head');
    expect(verifyHead([again.current], k.current.keyId, 'head', sig)).toBe('ok');
    expect(verifyHead([again.current], k.current.keyId, 'head!', sig)).toBe('bad_signature');
  });

  it('is not created by a verify: a clear error, nothing written', () => {
    const file = join(tmp(), 'receipt.key');
    expect(() => loadReceiptKey(file, { create: false })).toThrow(ReceiptKeyMissing);
    expect(() => statSync(file)).toThrow();
  });

  it('rotates, keeping the old public key so old heads still verify', () => {
    const file = join(tmp(), 'receipt.key');
    const old = loadReceiptKey(file, { create: true });
    const sig = old.sign('day 1');
    const next = rotateReceiptKey(file);
    expect(next.current.keyId).not.toBe(old.current.keyId);
    const read = loadReceiptKey(file, { create: false });
    expect(read.retired.map((k) => k.keyId)).toEqual([old.current.keyId]);
    expect(verifyHead([read.current, ...read.retired], old.current.keyId, 'day 1', sig)).toBe('ok');
    expect(verifyHead([read.current], old.current.keyId, 'day 1', sig)).toBe('unknown_key');
  });
});
