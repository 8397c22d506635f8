import { generateSecret, hashSecret, wellFormed } from './secrets.js';
import { newId } from '../domain/ids.js';

/** Bridge tokens: what an EA sends to connect one account (docs/bridge-protocol.md, section 5). */
export const BRIDGE_TOKEN_PREFIX = 'ctbt_';
/** How long a rotated-out token keeps working by default, so the user can update the EA at leisure. */
export const DEFAULT_ROTATION_OVERLAP_SEC = 24 * 3600;

export interface BridgeTokenRecord {
  id: string;
  accountId: string;
  /** SHA-256 of the token; the token itself is shown once and never stored. */
  hash: string;
  createdAt: Date;
  /** Set by a rotation: the token works until then. */
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export interface BridgeTokenRepo {
  insert(rec: BridgeTokenRecord): Promise<void>;
  byHash(hash: string): Promise<BridgeTokenRecord | null>;
  byAccount(accountId: string): Promise<BridgeTokenRecord[]>;
  update(id: string, change: { expiresAt?: Date | null; revokedAt?: Date | null }): Promise<void>;
}

export interface IssuedToken {
  id: string;
  /** Shown once. */
  token: string;
  createdAt: Date;
}

const live = (r: BridgeTokenRecord, now: Date) => !r.revokedAt && (!r.expiresAt || r.expiresAt > now);

export class BridgeTokens {
  constructor(
    private readonly repo: BridgeTokenRepo,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(accountId: string): Promise<IssuedToken> {
    const token = generateSecret(BRIDGE_TOKEN_PREFIX);
    const rec: BridgeTokenRecord = {
      id: newId('btk'),
      accountId,
      hash: hashSecret(token),
      createdAt: this.now(),
      expiresAt: null,
      revokedAt: null,
    };
    await this.repo.insert(rec);
    return { id: rec.id, token, createdAt: rec.createdAt };
  }

  /** A new token; the account's other live tokens keep working for `overlapSec` more, then stop. */
  async rotate(accountId: string, overlapSec = DEFAULT_ROTATION_OVERLAP_SEC): Promise<IssuedToken> {
    const now = this.now();
    const until = new Date(now.getTime() + overlapSec * 1000);
    for (const r of await this.repo.byAccount(accountId))
      if (live(r, now) && (!r.expiresAt || r.expiresAt > until)) await this.repo.update(r.id, { expiresAt: until });
    return this.create(accountId);
  }

  /** Ends a token at once; false when the account has no such token (a foreign id is as unknown). */
  async revoke(accountId: string, tokenId: string): Promise<boolean> {
    const r = (await this.repo.byAccount(accountId)).find((x) => x.id === tokenId);
    if (!r) return false;
    if (!r.revokedAt) await this.repo.update(r.id, { revokedAt: this.now() });
    return true;
  }

  async list(accountId: string): Promise<Array<Omit<BridgeTokenRecord, 'hash'> & { live: boolean }>> {
    const now = this.now();
    return (await this.repo.byAccount(accountId)).map(({ hash: _h, ...r }) => ({
      ...r,
      live: live({ ...r, hash: '' }, now),
    }));
  }

  /** The account a token opens, or null (malformed, unknown, expired by rotation, revoked): all alike to a caller. */
  async verify(token: string): Promise<{ tokenId: string; accountId: string } | null> {
    if (!wellFormed(token, BRIDGE_TOKEN_PREFIX)) return null;
    const r = await this.repo.byHash(hashSecret(token));
    if (!r || !live(r, this.now())) return null;
    return { tokenId: r.id, accountId: r.accountId };
  }
}

/** In memory: tests and a store without migration 0019. */
export class MemoryBridgeTokenRepo implements BridgeTokenRepo {
  private readonly rows = new Map<string, BridgeTokenRecord>();
  async insert(rec: BridgeTokenRecord) {
    this.rows.set(rec.id, { ...rec });
  }
  async byHash(hash: string) {
    for (const r of this.rows.values()) if (r.hash === hash) return { ...r };
    return null;
  }
  async byAccount(accountId: string) {
    return [...this.rows.values()].filter((r) => r.accountId === accountId).map((r) => ({ ...r }));
  }
  async update(id: string, change: { expiresAt?: Date | null; revokedAt?: Date | null }) {
    const r = this.rows.get(id);
    if (r) Object.assign(r, change);
  }
}
