import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { accessTokens, users } from '../schema.js';
import type { EventsRepo, NewEvent } from './events.js';
import { newId } from '../../domain/ids.js';
import { AppError } from '../../domain/errors.js';

export interface UserRow {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
  /** A signed-up user who has not verified the email address yet: cannot sign in. */
  verificationPending: boolean;
}

export class UsersRepo {
  constructor(
    private readonly db: Db,
    private readonly events: EventsRepo,
  ) {}

  /**
   * A new password hash, every live access token of the user revoked, and the event saying so, in one
   * transaction: a stolen session does not outlive the password it was signed in with.
   */
  async setPassword(
    userId: string,
    passwordHash: string,
    event: Omit<NewEvent, 'userId' | 'accountId'>,
  ): Promise<{ tokensRevoked: number } | null> {
    const res = await this.db.transaction(async (tx) => {
      const [u] = await tx.update(users).set({ passwordHash }).where(eq(users.id, userId)).returning({ id: users.id });
      if (!u) return null;
      const revoked = await tx
        .update(accessTokens)
        .set({ revokedAt: new Date() })
        .where(and(eq(accessTokens.userId, userId), isNull(accessTokens.revokedAt)))
        .returning({ id: accessTokens.id });
      await this.events.append(tx, [
        { ...event, userId, accountId: null, payload: { ...event.payload, tokensRevoked: revoked.length } },
      ]);
      return { tokensRevoked: revoked.length };
    });
    if (res) this.events.notify([userId]);
    return res;
  }

  /** `verificationPending`: a signed-up user, who cannot sign in until the email address is verified. */
  async create(email: string, passwordHash: string, opts: { verificationPending?: boolean } = {}): Promise<UserRow> {
    if (await this.byEmail(email)) throw new AppError('conflict', `a user with email ${email} already exists`);
    const [row] = await this.db
      .insert(users)
      .values({ id: newId('usr'), email, passwordHash, verificationPending: opts.verificationPending ?? false })
      .returning();
    return row!;
  }

  async markVerified(id: string): Promise<void> {
    await this.db.update(users).set({ verificationPending: false }).where(eq(users.id, id));
  }

  async byEmail(email: string): Promise<UserRow | null> {
    const [row] = await this.db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1);
    return row ?? null;
  }

  async byId(id: string): Promise<UserRow | null> {
    const [row] = await this.db.select().from(users).where(eq(users.id, id)).limit(1);
    return row ?? null;
  }

  async count(): Promise<number> {
    const [row] = await this.db.select({ n: sql<number>`count(*)::int` }).from(users);
    return row?.n ?? 0;
  }
}
