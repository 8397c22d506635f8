import { createHash } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import type { SignInFailuresRepo } from '../store/repos/sign-in-failures.js';

export interface SignInLimits {
  accountFreeFailures: number;
  addressFreeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  windowMs: number;
}

/** Subjects are stored hashed: the table says nothing about who tried what from where. */
const subject = (kind: 'email' | 'addr', value: string) =>
  `${kind}:${createHash('sha256').update(value.trim().toLowerCase()).digest('hex').slice(0, 32)}`;

/** The account may try again at once (a success, or the operator reset its password). */
export const clearAccountFailures = (repo: SignInFailuresRepo, email: string): Promise<void> =>
  repo.clear(subject('email', email));

/**
 * Growing delays after failed sign-ins, per account and per client address: the first failures are free,
 * then each one makes the next try wait twice as long (capped), and a try during the wait is refused with
 * its Retry-After before the password is even checked. Nothing locks for good: once the wait is over the
 * owner signs in (and a success clears the account's count); failures older than the window are forgotten.
 */
export class SignInThrottle {
  constructor(
    private readonly repo: SignInFailuresRepo,
    private readonly limits: SignInLimits,
  ) {}

  /** Throws 429 rate_limited while the account or the address must wait. */
  async check(email: string, address: string | undefined, now = new Date()): Promise<void> {
    const subjects = [subject('email', email), ...(address ? [subject('addr', address)] : [])];
    const until = await this.repo.blockedUntil(subjects, now);
    if (!until) return;
    const retryAfter = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
    throw new AppError(
      'rate_limited',
      `too many failed sign-ins for this account or from this address; try again in ${retryAfter} s`,
      { retryAfter, details: { retryAfter } },
    );
  }

  /** Counts a failure; says how many the account has in the window and how long its next try must wait. */
  async failed(
    email: string,
    address: string | undefined,
    now = new Date(),
  ): Promise<{ failures: number; retryAfterSec: number | null }> {
    const l = this.limits;
    const policy = (free: number) => ({
      free,
      baseDelayMs: l.baseDelayMs,
      maxDelayMs: l.maxDelayMs,
      windowMs: l.windowMs,
    });
    const [account] = await Promise.all([
      this.repo.fail(subject('email', email), policy(l.accountFreeFailures), now),
      address ? this.repo.fail(subject('addr', address), policy(l.addressFreeFailures), now) : null,
    ]);
    return {
      failures: account.failures,
      retryAfterSec: account.blockedUntil
        ? Math.max(1, Math.ceil((account.blockedUntil.getTime() - now.getTime()) / 1000))
        : null,
    };
  }

  succeeded(email: string): Promise<void> {
    return clearAccountFailures(this.repo, email);
  }

  purge(now = new Date()): Promise<void> {
    return this.repo.purge(new Date(now.getTime() - this.limits.windowMs));
  }
}
