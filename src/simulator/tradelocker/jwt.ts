import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Real-shaped JWTs (HS256) so clients that decode `exp` without verifying, like the official Python client,
 * work unchanged. Revocation exists only so a fault can force a client through the refresh path.
 */

export interface TokenClaims {
  sub: string;
  typ: 'access' | 'refresh';
  jti: string;
  iat: number;
  exp: number;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export class TokenIssuer {
  private readonly secret = randomBytes(32);
  private readonly revoked = new Set<string>();
  /** Every jti issued per subject, so a whole session (refresh token included) can be invalidated at once. */
  private readonly issued = new Map<string, string[]>();

  constructor(
    private readonly accessTtlSec: number,
    private readonly refreshTtlSec: number,
    private readonly now: () => number = Date.now,
  ) {}

  issuePair(sub: string): { accessToken: string; refreshToken: string; expireDate: string } {
    const now = Math.floor(this.now() / 1000);
    const aj = randomBytes(8).toString('hex');
    const rj = randomBytes(8).toString('hex');
    const list = this.issued.get(sub) ?? [];
    list.push(aj, rj);
    this.issued.set(sub, list.slice(-200));
    const access = this.sign({ sub, typ: 'access', jti: aj, iat: now, exp: now + this.accessTtlSec });
    const refresh = this.sign({ sub, typ: 'refresh', jti: rj, iat: now, exp: now + this.refreshTtlSec });
    return {
      accessToken: access,
      refreshToken: refresh,
      expireDate: new Date((now + this.accessTtlSec) * 1000).toISOString(),
    };
  }

  verify(token: string, typ: TokenClaims['typ']): TokenClaims | null {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const expected = createHmac('sha256', this.secret).update(`${parts[0]}.${parts[1]}`).digest();
    const given = Buffer.from(parts[2]!, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let claims: TokenClaims;
    try {
      claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as TokenClaims;
    } catch {
      return null;
    }
    if (claims.typ !== typ || claims.exp * 1000 <= this.now() || this.revoked.has(claims.jti)) return null;
    return claims;
  }

  revoke(jti: string): void {
    this.revoked.add(jti);
  }

  revokeSubject(sub: string): void {
    for (const j of this.issued.get(sub) ?? []) this.revoked.add(j);
  }

  private sign(claims: TokenClaims): string {
    const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const body = b64url(JSON.stringify(claims));
    const sig = createHmac('sha256', this.secret).update(`${head}.${body}`).digest('base64url');
    return `${head}.${body}.${sig}`;
  }
}
