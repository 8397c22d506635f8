import { and, gt, inArray, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { signInFailures } from '../schema.js';

export interface FailurePolicy {
  /** Failures answered without a delay. */
  free: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A failure older than this starts the count again. */
  windowMs: number;
}

/**
 * Failed sign-ins per subject. One upsert per failure counts it and sets when the next try is allowed, so two
 * API processes counting the same subject at once still count both.
 */
export class SignInFailuresRepo {
  constructor(private readonly db: Db) {}

  /** Each of the subjects whose row runs until after `now`, with that time (waits, and remembered pairs). */
  async until(subjects: string[], now = new Date()): Promise<Map<string, Date>> {
    const rows = await this.db
      .select({ subject: signInFailures.subject, until: signInFailures.blockedUntil })
      .from(signInFailures)
      .where(and(inArray(signInFailures.subject, subjects), gt(signInFailures.blockedUntil, now)));
    return new Map(rows.map((r) => [r.subject, r.until!]));
  }

  /**
   * A subject that is no failure but a fact kept until `until` (the sign-in throttle's "this account signed in
   * from this address"): failures 0, and `blocked_until` is how long it is kept, which also keeps purge away.
   */
  async remember(subject: string, until: Date, now = new Date()): Promise<void> {
    await this.db
      .insert(signInFailures)
      .values({ subject, failures: 0, lastFailureAt: now, blockedUntil: until })
      .onConflictDoUpdate({ target: signInFailures.subject, set: { lastFailureAt: now, blockedUntil: until } });
  }

  async fail(
    subject: string,
    p: FailurePolicy,
    now = new Date(),
  ): Promise<{ failures: number; blockedUntil: Date | null }> {
    const cutoff = new Date(now.getTime() - p.windowMs);
    const n = sql`(case when f.last_failure_at < ${cutoff} then 1 else f.failures + 1 end)`;
    // The k-th failure past the free ones waits base * 2^(k-1), at most maxDelayMs.
    const until = (count: unknown) => sql`case when ${count} > ${p.free}
      then ${now}::timestamptz + make_interval(secs => least(${p.maxDelayMs}::float8, ${p.baseDelayMs}::float8 * power(2::float8, (${count} - ${p.free} - 1)::float8)) / 1000.0)
      else null end`;
    const res = await this.db.execute(sql`
      insert into sign_in_failures as f (subject, failures, last_failure_at, blocked_until)
      values (${subject}, 1, ${now}, ${until(sql`1`)})
      on conflict (subject) do update set failures = ${n}, last_failure_at = ${now}, blocked_until = ${until(n)}
      returning failures, blocked_until`);
    const row = (res as unknown as { rows: Array<{ failures: number; blocked_until: string | Date | null }> }).rows[0]!;
    return {
      failures: Number(row.failures),
      blockedUntil: row.blocked_until === null ? null : new Date(row.blocked_until),
    };
  }

  async clear(subject: string): Promise<void> {
    await this.db.delete(signInFailures).where(inArray(signInFailures.subject, [subject]));
  }

  /** Rows whose window and wait are both over say nothing any more. */
  async purge(olderThan: Date): Promise<void> {
    await this.db
      .delete(signInFailures)
      .where(
        and(
          lt(signInFailures.lastFailureAt, olderThan),
          or(sql`${signInFailures.blockedUntil} is null`, lt(signInFailures.blockedUntil, olderThan)),
        ),
      );
  }
}
