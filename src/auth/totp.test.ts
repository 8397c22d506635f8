import { describe, expect, it } from 'vitest';
import {
  acceptedStep,
  looksLikeRecoveryCode,
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
  recoveryCodeHash,
  totpCode,
} from './totp.js';

describe('TOTP (RFC 6238)', () => {
  it('matches the RFC 6238 appendix B vector for SHA-1 (59 s -> 94287082, 6 digits: 287082)', () => {
    // The RFC's seed "12345678901234567890" in base32.
    const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
    expect(totpCode(seed, 59_000)).toBe('287082');
    expect(acceptedStep(seed, '287082', 59_000, null)).toBe(1);
  });

  it('accepts one step either side, refuses further and a step already used', () => {
    const s = newTotpSecret();
    const t = 1_800_000_000_000;
    const step = Math.floor(t / 30_000);
    expect(acceptedStep(s, totpCode(s, t - 30_000), t, null)).toBe(step - 1);
    expect(acceptedStep(s, totpCode(s, t + 30_000), t, null)).toBe(step + 1);
    expect(acceptedStep(s, totpCode(s, t - 90_000), t, null)).toBeNull();
    expect(acceptedStep(s, totpCode(s, t), t, step)).toBeNull();
    expect(acceptedStep(s, totpCode(s, t), t, step - 1)).toBe(step);
    expect(acceptedStep(s, 'abcdef', t, null)).toBeNull();
  });

  it('gives an otpauth URI an authenticator app reads', () => {
    const s = newTotpSecret();
    const uri = new URL(otpauthUri(s, 'ann@example.test'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(uri.searchParams.get('secret')).toBe(s);
    expect(uri.searchParams.get('issuer')).toBe('copytrade');
  });
});

describe('recovery codes', () => {
  it('are distinct, hashed the same however they are typed, and told apart from TOTP codes', () => {
    const codes = newRecoveryCodes();
    expect(new Set(codes).size).toBe(10);
    const c = codes[0]!;
    expect(c).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    expect(recoveryCodeHash(c.toUpperCase().replace('-', ' '))).toBe(recoveryCodeHash(c));
    expect(recoveryCodeHash(c)).not.toContain(c.replace('-', ''));
    expect(looksLikeRecoveryCode(c)).toBe(true);
    expect(looksLikeRecoveryCode('123456')).toBe(false);
  });
});
