import { AppError, invalid } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import type { ApiKeyRow } from '../store/repos/credentials.js';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.js';
import { SecretHashes } from './secret-hashes.js';
import { clearAccountFailures, SignInThrottle, type SignInLimits } from './sign-in-throttle.js';
import { SignInFailuresRepo } from '../store/repos/sign-in-failures.js';
import { ACCESS_TOKEN_PREFIX, API_KEY_PREFIX, displayPrefix, generateSecret, hashSecret } from './secrets.js';
import { signInChallenge, type SecondFactorService, type SignInResult } from './second-factor.js';

export interface AuthConfig {
  /** Sign-in throttling; absent (the CLI) = none. */
  signIn?: SignInLimits;
  /** Lifetime of a sign-in access token. */
  accessTokenTtlSec: number;
  /** How long a rotated API key keeps working beside its replacement. */
  apiKeyOverlapSec: number;
  /** Clock in ms for the lifetimes of access tokens and rotated API keys; Date.now when omitted. */
  clock?: () => number;
  /** Checks second-factor codes; absent (the CLI) = sign-in never asks for one. */
  secondFactor?: SecondFactorService;
}

export interface Principal {
  userId: string;
  credentialKind: 'access_token' | 'api_key';
  credentialId: string;
  /** An API key's dedicated family V limits (null = the default); absent for access tokens. */
  limits?: { writes: number | null; reads: number | null };
  /** An API key's rate budget: its successor's while it is a rotated key in its overlap, else its own id. */
  rateKey?: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

// Spend the same scrypt time for unknown emails, so sign-in timing does not reveal who has an account.
const DUMMY_HASH = hashPassword('timing-equaliser');

export class AuthService {
  private readonly touched = new Map<string, number>();
  private readonly failures: SignInFailuresRepo;
  /** Sign-in throttling; sign-up counts against it too (docs/people.md). */
  readonly throttle: SignInThrottle | null;
  private failedSinceSweep = 0;
  private readonly tokenHashes = new SecretHashes(ACCESS_TOKEN_PREFIX);
  private readonly keyHashes = new SecretHashes(API_KEY_PREFIX);
  /** The TOTP factor (the dashboard's routes enrol and disable with it); null where sign-in never asks (CLI). */
  readonly secondFactor: SecondFactorService | null;

  constructor(
    private readonly store: Store,
    private readonly cfg: AuthConfig,
  ) {
    this.secondFactor = cfg.secondFactor ?? null;
    this.failures = new SignInFailuresRepo(store.database.db);
    this.throttle = cfg.signIn ? new SignInThrottle(this.failures, cfg.signIn) : null;
  }

  async createUser(
    email: string,
    password: string,
    opts: { verificationPending?: boolean } = {},
  ): Promise<{ id: string; email: string }> {
    if (!EMAIL.test(email) || email.length > 254)
      throw invalid(`email ${JSON.stringify(email)} is not a valid address`);
    if (password.length < MIN_PASSWORD_LENGTH)
      throw invalid(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    const u = await this.store.users.create(email, await hashPassword(password), opts);
    return { id: u.id, email: u.email };
  }

  /**
   * `from` is the client's address. While the account or the address must wait after failed tries, the answer
   * is 429 before the password is checked; a wrong password of an existing account is an event its owner sees.
   */
  async signIn(email: string, password: string, from?: string): Promise<SignInResult> {
    await this.throttle?.check(email, from);
    const user = await this.store.users.byEmail(email);
    const ok = user
      ? await verifyPassword(password, user.passwordHash)
      : (await verifyPassword(password, await DUMMY_HASH), false);
    if (!user || !ok) {
      await this.failedAttempt(email, from, user?.id ?? null, 'sign_in');
      throw new AppError('unauthorized', 'email or password is wrong');
    }
    // Told only to whoever knew the password: before that, an unverified account looks like any other.
    if (user.verificationPending)
      throw new AppError('unauthorized', 'verify your email address first: follow the link we sent you');
    if (await this.cfg.secondFactor?.required(user.id)) return signInChallenge(this.store, user.id, this.now());
    await this.throttle?.succeeded(email, from);
    return { ...(await this.issueToken(user.id)), userId: user.id };
  }

  /**
   * The second step: the challenge of a right password and a code (TOTP or recovery). A wrong code counts like
   * a failed sign-in of the account and the address; the challenge stays good until it expires or succeeds.
   */
  async completeSignIn(
    challenge: string,
    code: string,
    from?: string,
  ): Promise<{ accessToken: string; tokenId: string; expiresAt: Date; userId: string }> {
    const hash = hashSecret(challenge);
    const expired = new AppError('unauthorized', 'the sign-in expired or was used: sign in with your password again');
    const userId = await this.store.secondFactor.tokenUser('sign_in_second_factor', hash, this.now(), false);
    const user = userId ? await this.store.users.byId(userId) : null;
    if (!user || !this.cfg.secondFactor) throw expired;
    await this.throttle?.check(user.email, from);
    if (!(await this.cfg.secondFactor.verify(user.id, code))) {
      await this.failedAttempt(user.email, from, user.id, 'second_factor');
      throw new AppError('unauthorized', 'the code is wrong or was used already');
    }
    if (!(await this.store.secondFactor.tokenUser('sign_in_second_factor', hash, this.now(), true))) throw expired;
    await this.throttle?.succeeded(user.email, from);
    return { ...(await this.issueToken(user.id)), userId: user.id };
  }

  private async failedAttempt(
    email: string,
    from: string | undefined,
    userId: string | null,
    attempt: 'sign_in' | 'password_change' | 'second_factor',
  ): Promise<void> {
    const counted = await this.throttle?.failed(email, from);
    // Rows of sprayed addresses and emails would pile up: an occasional sweep drops those whose window is over.
    if (this.throttle && ++this.failedSinceSweep >= 200) {
      this.failedSinceSweep = 0;
      void this.throttle.purge().catch(() => undefined);
    }
    if (!userId) return;
    await this.store.events.emit([
      {
        userId,
        accountId: null,
        type: 'user.sign_in_failed',
        payload: {
          attempt,
          clientAddress: from ?? null,
          failures: counted?.failures ?? null,
          retryAfterSec: counted?.retryAfterSec ?? null,
        },
      },
    ]);
  }

  /**
   * The signed-in user's new password: the current one must be given (and wrong tries count like failed
   * sign-ins). Every access token of the user is revoked; the caller gets a fresh one.
   */
  async changePassword(
    userId: string,
    current: string,
    next: string,
    from?: string,
    opts: { revokeApiKeys?: boolean } = {},
  ): Promise<{ accessToken: string; tokenId: string; expiresAt: Date; tokensRevoked: number; apiKeysRevoked: number }> {
    const user = await this.store.users.byId(userId);
    if (!user) throw new AppError('unauthorized', 'the user no longer exists');
    await this.throttle?.check(user.email, from);
    if (!(await verifyPassword(current, user.passwordHash))) {
      await this.failedAttempt(user.email, from, user.id, 'password_change');
      throw invalid('the current password is wrong');
    }
    const { tokensRevoked } = await this.setPassword(user.id, next, 'user');
    const apiKeysRevoked = opts.revokeApiKeys ? await this.store.credentials.revokeAllApiKeys(user.id) : 0;
    await this.throttle?.succeeded(user.email, from);
    return { ...(await this.issueToken(user.id)), tokensRevoked, apiKeysRevoked };
  }

  /**
   * The operator's reset (CLI): a new password, every access token revoked, any sign-in wait lifted; with
   * `revokeApiKeys` every API key too (a password that leaked may have let someone create keys).
   */
  async resetPassword(
    email: string,
    next: string,
    opts: { revokeApiKeys?: boolean } = {},
  ): Promise<{ userId: string; tokensRevoked: number; apiKeysRevoked: number }> {
    const user = await this.store.users.byEmail(email);
    if (!user) throw new AppError('not_found', `no user with email ${email}`);
    const { tokensRevoked } = await this.setPassword(user.id, next, 'operator');
    const apiKeysRevoked = opts.revokeApiKeys ? await this.store.credentials.revokeAllApiKeys(user.id) : 0;
    await clearAccountFailures(this.failures, user.email);
    return { userId: user.id, tokensRevoked, apiKeysRevoked };
  }

  private async setPassword(
    userId: string,
    password: string,
    by: 'user' | 'operator',
  ): Promise<{ tokensRevoked: number }> {
    if (password.length < MIN_PASSWORD_LENGTH)
      throw invalid(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    const res = await this.store.users.setPassword(userId, await hashPassword(password), {
      type: 'user.password_changed',
      payload: { by },
    });
    if (!res) throw new AppError('not_found', 'user not found');
    return res;
  }

  async issueToken(userId: string): Promise<{ accessToken: string; tokenId: string; expiresAt: Date }> {
    const accessToken = generateSecret(ACCESS_TOKEN_PREFIX);
    const { id, expiresAt } = await this.store.credentials.insertAccessToken(
      userId,
      hashSecret(accessToken),
      new Date(this.now().getTime() + this.cfg.accessTokenTtlSec * 1000),
    );
    return { accessToken, tokenId: id, expiresAt };
  }

  async authenticateToken(bearer: string): Promise<Principal | null> {
    const hash = this.tokenHashes.of(bearer);
    if (!hash) return null;
    const t = await this.store.credentials.liveAccessToken(hash, this.now());
    return t ? { userId: t.userId, credentialKind: 'access_token', credentialId: t.id } : null;
  }

  revokeToken(userId: string, tokenId: string): Promise<boolean> {
    return this.store.credentials.revokeAccessToken(tokenId, userId);
  }

  async authenticateApiKey(bearer: string): Promise<Principal | null> {
    const hash = this.keyHashes.of(bearer);
    if (!hash) return null;
    const k = await this.store.credentials.liveApiKey(hash, this.now());
    if (!k) return null;
    // Last-used is coarse (a minute): remember when we last wrote it instead of issuing an UPDATE per request.
    const now = Date.now();
    if ((this.touched.get(k.id) ?? 0) < now - 60_000) {
      this.touched.set(k.id, now);
      void this.store.credentials.touchApiKey(k.id).catch(() => undefined);
    }
    return { userId: k.userId, credentialKind: 'api_key', credentialId: k.id, limits: k.limits, rateKey: k.rateKey };
  }

  async createApiKey(userId: string, name: string): Promise<{ key: ApiKeyRow; apiKey: string }> {
    const apiKey = generateSecret(API_KEY_PREFIX);
    const key = await this.store.credentials.insertApiKey(
      userId,
      name,
      displayPrefix(apiKey, API_KEY_PREFIX),
      hashSecret(apiKey),
    );
    return { key, apiKey };
  }

  listApiKeys(userId: string, page: { after?: string | undefined; limit?: number } = {}): Promise<ApiKeyRow[]> {
    return this.store.credentials.listApiKeys(userId, page);
  }

  /** The longest overlap a rotation may ask for, and what it gets when it asks for none. */
  get maxOverlapSec(): number {
    return this.cfg.apiKeyOverlapSec;
  }

  /**
   * The new key is shown once; the old one keeps working for the overlap window (0 = stops now), at most
   * COPYTRADE_API_KEY_OVERLAP_SEC. A key already rotated is refused (409: rotate its replacement).
   */
  async rotateApiKey(
    userId: string,
    keyId: string,
    overlapSec = this.cfg.apiKeyOverlapSec,
  ): Promise<{ key: ApiKeyRow; apiKey: string; previousExpiresAt: Date } | null> {
    if (overlapSec > this.cfg.apiKeyOverlapSec)
      throw invalid(
        `the overlap must be at most ${this.cfg.apiKeyOverlapSec} seconds (COPYTRADE_API_KEY_OVERLAP_SEC), got ${overlapSec}`,
      );
    const current = await this.store.credentials.apiKey(userId, keyId);
    if (current?.replacedBy && !current.revokedAt)
      throw new AppError(
        'conflict',
        `API key ${keyId} was already rotated; rotate its replacement ${current.replacedBy} instead`,
      );
    const apiKey = generateSecret(API_KEY_PREFIX);
    const now = this.now();
    const until = new Date(now.getTime() + overlapSec * 1000);
    const key = await this.store.credentials.rotateApiKey(
      userId,
      keyId,
      until,
      displayPrefix(apiKey, API_KEY_PREFIX),
      hashSecret(apiKey),
      now,
    );
    if (!key) return null;
    const old = await this.store.credentials.apiKey(userId, keyId);
    return { key, apiKey, previousExpiresAt: old?.expiresAt ?? until };
  }

  private now(): Date {
    return new Date((this.cfg.clock ?? Date.now)());
  }

  revokeApiKey(userId: string, keyId: string): Promise<boolean> {
    return this.store.credentials.revokeApiKey(userId, keyId);
  }
}
