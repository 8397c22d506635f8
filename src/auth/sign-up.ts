import { AppError, invalid } from '../domain/errors.js';
import type { AlertMessage } from '../alerts/message.js';
import type { SendResult } from '../alerts/send-result.js';
import type { SignUpConfig } from '../config/sign-up-config.js';
import type { Store } from '../store/store.js';
import type { AuthService } from './auth-service.js';
import { generateSecret, hashSecret, VERIFY_PREFIX } from './secrets.js';
import type { SignInThrottle } from './sign-in-throttle.js';

export interface Mailer {
  sendTo(to: string, msg: AlertMessage): Promise<SendResult>;
}

/**
 * Self-service sign-up (docs/people.md), when the operator turns it on: the user is created unverified, a
 * single-use link (its token stored hashed, expiring) goes out through the alerts' SMTP server, and sign-in
 * refuses the user until the link is followed. Every sign-up counts against the address and the email like a
 * failed sign-in, so a flood from one address meets the same growing waits. The answer is the same whether or
 * not the email already has an account: sign-up does not tell who is a user.
 */
export class SignUpService {
  constructor(
    private readonly store: Store,
    private readonly auth: AuthService,
    private readonly cfg: SignUpConfig,
    private readonly mailer: Mailer,
    private readonly throttle: SignInThrottle | null,
    private readonly clock: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.cfg.enabled;
  }

  async signUp(email: string, password: string, from?: string): Promise<void> {
    if (!this.cfg.enabled)
      throw new AppError('not_found', 'sign-up is off on this server: ask its operator for an account');
    const address = email.trim();
    await this.throttle?.check(address, from);
    await this.throttle?.failed(address, from);
    const existing = await this.store.users.byEmail(address);
    if (existing && !existing.verificationPending) return;
    const user = existing ?? (await this.auth.createUser(address, password, { verificationPending: true }));
    await this.sendLink(user.id, address);
  }

  /** Follows the link: the user may sign in from now on. 400 for a token that is wrong, used or expired. */
  async verify(token: string): Promise<{ userId: string; email: string }> {
    const userId = await this.store.secondFactor.tokenUser(
      'email_verification',
      hashSecret(token.trim()),
      new Date(this.clock()),
      true,
    );
    const user = userId ? await this.store.users.byId(userId) : null;
    if (!user)
      throw invalid('the verification link is wrong, expired or was used: sign up again for a new one', {
        field: 'token',
      });
    await this.store.users.markVerified(user.id);
    return { userId: user.id, email: user.email };
  }

  private async sendLink(userId: string, email: string): Promise<void> {
    const token = generateSecret(VERIFY_PREFIX);
    const expiresAt = new Date(this.clock() + this.cfg.verifyTtlMs);
    await this.store.secondFactor.addToken(userId, 'email_verification', hashSecret(token), expiresAt);
    const link = `${this.cfg.publicUrl}/verify-email?token=${encodeURIComponent(token)}`;
    const hours = Math.round(this.cfg.verifyTtlMs / 3_600_000);
    const sent = await this.mailer.sendTo(email, {
      subject: 'Verify your email address for copytrade',
      text: `Someone (we hope you) signed up to copytrade with this address.\n\nTo verify it, open this link within ${hours} hours:\n${link}\n\nIf it was not you, ignore this message: the account stays unusable.\n`,
    });
    if (!sent.ok)
      throw new AppError('upstream_unavailable', 'the verification email could not be sent; try again later', {
        retryable: true,
      });
  }
}
