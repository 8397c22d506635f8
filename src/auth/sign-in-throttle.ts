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
const subject = (kind: 'email' | 'addr' | 'known', value: string) =>
  `${kind}:${createHash('sha256').update(value.trim().toLowerCase()).digest('hex').slice(0, 32)}`;
/** "This account signed in from this address": the pair, hashed as one. */
const knownPair = (email: string, address: string) => subject('known', `${email.trim()}\n${address}`);

/** How long a successful sign-in from an address exempts the account from that address's wait. */
const KNOWN_ADDRESS_MS = 30 * 86_400_000;

/** The account may try again at once (a success, or the operator reset its password). */
export const clearAccountFailures = (repo: SignInFailuresRepo, email: string): Promise<void> =>
  repo.clear(subject('email', email));

/**
 * Growing delays after failed sign-ins, per account and per client address, kept apart: the first failures are
 * free (an address gets many more than an account: offices and mobile networks share one), then each one makes
 * the next try wait twice as long (capped), and a try during the wait is refused with its Retry-After before the
 * password is even checked. Nothing locks for good: once the wait is over the owner signs in (and a success
 * clears the account's count); failures older than the window are forgotten.
 *
 * An address's wait does not hold up an account that has signed in from that address before (in the last 30
 * days): strangers spraying emails from a shared address cannot lock out the people who use it, while the spray
 * itself (emails that never signed in there) is refused. The account's own wait still applies to everyone.
 */
export class SignInThrottle {
  constructor(
    private readonly repo: SignInFailuresRepo,
    private readonly limits: SignInLimits,
  ) {}

  /** Throws 429 rate_limited while the account, or the address for an account new to it, must wait. */
  async check(email: string, address: string | undefined, now = new Date()): Promise<void> {
    const account = subject('email', email);
    const addr = address ? subject('addr', address) : null;
    const known = address ? knownPair(email, address) : null;
    const rows = await this.repo.until([account, ...(addr && known ? [addr, known] : [])], now);
    const waits = [rows.get(account), addr && known && !rows.has(known) ? rows.get(addr) : undefined].filter(
      (d): d is Date => d !== undefined,
    );
    if (waits.length === 0) return;
    const until = Math.max(...waits.map((d) => d.getTime()));
    const retryAfter = Math.max(1, Math.ceil((until - now.getTime()) / 1000));
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

  async succeeded(email: string, address: string | undefined, now = new Date()): Promise<void> {
    await Promise.all([
      clearAccountFailures(this.repo, email),
      address ? this.repo.remember(knownPair(email, address), new Date(now.getTime() + KNOWN_ADDRESS_MS), now) : null,
    ]);
  }

  purge(now = new Date()): Promise<void> {
    return this.repo.purge(new Date(now.getTime() - this.limits.windowMs));
  }
}
