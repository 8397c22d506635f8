import { AppError, invalid } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import type { CredentialBox } from './credential-box.js';
import { CHALLENGE_PREFIX, generateSecret, hashSecret } from './secrets.js';
import {
  acceptedStep,
  looksLikeRecoveryCode,
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
  recoveryCodeHash,
} from './totp.js';

/** A sign-in whose password was right: a token, or (second factor on) a challenge to answer with a code. */
export type SignInResult =
  | { accessToken: string; tokenId: string; expiresAt: Date; userId: string }
  | { secondFactorRequired: true; challenge: string; expiresAt: Date; userId: string };

/** How long the password step of a sign-in waits for its code. */
const CHALLENGE_TTL_MS = 5 * 60_000;

/** The password was right and the factor is on: a single-use challenge (stored hashed) to answer with a code. */
export async function signInChallenge(store: Store, userId: string, now: Date): Promise<SignInResult> {
  const challenge = generateSecret(CHALLENGE_PREFIX);
  const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS);
  await store.secondFactor.addToken(userId, 'sign_in_second_factor', hashSecret(challenge), expiresAt);
  return { secondFactorRequired: true, challenge, expiresAt, userId };
}

export interface SecondFactorStatus {
  enabled: boolean;
  /** Enrolment started, waiting for the first code. */
  pending: boolean;
  recoveryCodesLeft: number;
}

/**
 * A user's TOTP second factor (docs/people.md): enrol (a secret and its otpauth URI), confirm with a first code
 * (the factor goes on and ten recovery codes are shown once), check a code at sign-in (a TOTP code once per time
 * step, or an unused recovery code, which is then used up), and disable with a code. The secret is sealed with
 * the credential box; recovery codes are stored as SHA-256 only.
 */
export class SecondFactorService {
  constructor(
    private readonly store: Store,
    private readonly box: CredentialBox,
    private readonly clock: () => number = Date.now,
  ) {}

  async status(userId: string): Promise<SecondFactorStatus> {
    const row = await this.store.secondFactor.get(userId);
    return {
      enabled: !!row?.enabledAt,
      pending: !!row?.secretEnc && !row.enabledAt,
      recoveryCodesLeft: row?.enabledAt ? await this.store.secondFactor.recoveryCodesLeft(userId) : 0,
    };
  }

  /** A new secret (replacing one not yet confirmed); 409 while the factor is on (disable it first). */
  async enrol(userId: string): Promise<{ secret: string; otpauthUri: string }> {
    const user = await this.store.users.byId(userId);
    if (!user) throw new AppError('unauthorized', 'the user no longer exists');
    const secret = newTotpSecret();
    if (!(await this.store.secondFactor.setPending(userId, this.box.seal({ secret }))))
      throw new AppError(
        'conflict',
        'the second factor is already on; disable it (with a code) before enrolling again',
      );
    return { secret, otpauthUri: otpauthUri(secret, user.email) };
  }

  /** The first code from the app turns the factor on; the recovery codes are in this answer only. */
  async confirm(userId: string, code: string): Promise<{ recoveryCodes: string[] }> {
    const row = await this.store.secondFactor.get(userId);
    if (!row?.secretEnc || row.enabledAt)
      throw new AppError('conflict', row?.enabledAt ? 'the second factor is already on' : 'enrol first');
    const step = acceptedStep(this.secret(row.secretEnc), code, this.clock(), null);
    if (step === null)
      throw invalid('the code is wrong or out of date: type the one your app shows now', { field: 'code' });
    const recoveryCodes = newRecoveryCodes();
    await this.store.secondFactor.enable(userId, step, recoveryCodes.map(recoveryCodeHash));
    return { recoveryCodes };
  }

  /** True when `code` is a current TOTP code not used before, or an unused recovery code (then used up). */
  async verify(userId: string, code: string): Promise<boolean> {
    const row = await this.store.secondFactor.get(userId);
    if (!row?.secretEnc || !row.enabledAt) return false;
    if (looksLikeRecoveryCode(code)) return this.store.secondFactor.useRecoveryCode(userId, recoveryCodeHash(code));
    const step = acceptedStep(this.secret(row.secretEnc), code, this.clock(), row.lastStep);
    return step !== null && (await this.store.secondFactor.useStep(userId, step));
  }

  async required(userId: string): Promise<boolean> {
    return !!(await this.store.secondFactor.get(userId))?.enabledAt;
  }

  /** Off with a code (TOTP or recovery); the secret and every recovery code are deleted. */
  async disable(userId: string, code: string): Promise<void> {
    if (!(await this.required(userId))) throw new AppError('conflict', 'the second factor is not on');
    if (!(await this.verify(userId, code))) throw invalid('the code is wrong or was used already', { field: 'code' });
    await this.store.secondFactor.disable(userId);
  }

  /** The operator's reset (CLI, a user who lost the phone and the codes): off without a code. */
  async reset(userId: string): Promise<void> {
    await this.store.secondFactor.disable(userId);
  }

  private secret(sealed: string): string {
    return this.box.open<{ secret: string }>(sealed).secret;
  }
}
