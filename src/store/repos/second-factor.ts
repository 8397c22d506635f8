import { and, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { oneTimeTokens, recoveryCodes, users } from '../schema.js';

export interface SecondFactorRow {
  /** Sealed by the credential box; set from enrolment on (pending until `enabledAt`). */
  secretEnc: string | null;
  enabledAt: Date | null;
  lastStep: number | null;
}

export type OneTimePurpose = 'email_verification' | 'sign_in_second_factor';

/** The TOTP factor of users, their recovery codes (hashes), and single-use expiring tokens (hashes). */
export class SecondFactorRepo {
  constructor(private readonly db: Db) {}

  async get(userId: string): Promise<SecondFactorRow | null> {
    const [r] = await this.db
      .select({ secretEnc: users.totpSecretEnc, enabledAt: users.totpEnabledAt, lastStep: users.totpLastStep })
      .from(users)
      .where(eq(users.id, userId))
      .limit(1);
    return r ?? null;
  }

  /** A new secret waiting for its first code; refused (false) while a confirmed factor is on. */
  async setPending(userId: string, secretEnc: string): Promise<boolean> {
    const rows = await this.db
      .update(users)
      .set({ totpSecretEnc: secretEnc, totpLastStep: null })
      .where(and(eq(users.id, userId), isNull(users.totpEnabledAt)))
      .returning({ id: users.id });
    return rows.length > 0;
  }

  /** The factor on, with the step of the confirming code and a new set of recovery codes, in one transaction. */
  async enable(userId: string, step: number, codeHashes: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.update(users).set({ totpEnabledAt: new Date(), totpLastStep: step }).where(eq(users.id, userId));
      await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
      await tx.insert(recoveryCodes).values(codeHashes.map((codeHash) => ({ userId, codeHash })));
    });
  }

  async disable(userId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx
        .update(users)
        .set({ totpSecretEnc: null, totpEnabledAt: null, totpLastStep: null })
        .where(eq(users.id, userId));
      await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
    });
  }

  /** Compare-and-set of the last step used: two requests with one code cannot both pass. */
  async useStep(userId: string, step: number): Promise<boolean> {
    const rows = await this.db
      .update(users)
      .set({ totpLastStep: step })
      .where(and(eq(users.id, userId), or(isNull(users.totpLastStep), lt(users.totpLastStep, step))))
      .returning({ id: users.id });
    return rows.length > 0;
  }

  /** Marks an unused recovery code used; false when it is unknown or was used. */
  async useRecoveryCode(userId: string, codeHash: string): Promise<boolean> {
    const rows = await this.db
      .update(recoveryCodes)
      .set({ usedAt: new Date() })
      .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, codeHash), isNull(recoveryCodes.usedAt)))
      .returning({ userId: recoveryCodes.userId });
    return rows.length > 0;
  }

  async recoveryCodesLeft(userId: string): Promise<number> {
    const [r] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)));
    return Number(r?.n ?? 0);
  }

  async addToken(userId: string, purpose: OneTimePurpose, tokenHash: string, expiresAt: Date): Promise<void> {
    await this.db.insert(oneTimeTokens).values({ tokenHash, userId, purpose, expiresAt });
  }

  /** The token's user while it is unused and unexpired; `consume` marks it used in the same statement. */
  async tokenUser(purpose: OneTimePurpose, tokenHash: string, now: Date, consume: boolean): Promise<string | null> {
    const live = and(
      eq(oneTimeTokens.tokenHash, tokenHash),
      eq(oneTimeTokens.purpose, purpose),
      isNull(oneTimeTokens.usedAt),
      gt(oneTimeTokens.expiresAt, now),
    );
    if (consume) {
      const [r] = await this.db
        .update(oneTimeTokens)
        .set({ usedAt: now })
        .where(live)
        .returning({ userId: oneTimeTokens.userId });
      return r?.userId ?? null;
    }
    const [r] = await this.db.select({ userId: oneTimeTokens.userId }).from(oneTimeTokens).where(live).limit(1);
    return r?.userId ?? null;
  }
}
