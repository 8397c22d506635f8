import { hashSecret, wellFormed } from './secrets.js';

/** Enough for every key and token in use at once on one process; past it the memo starts again empty. */
const MAX_ENTRIES = 10_000;

/**
 * A bearer secret's SHA-256, remembered for the secrets seen recently: a client sends the same key on every
 * request, and its checksum test and hash were a measurable share of a cheap read's CPU (docs/performance.md,
 * GET /v1/accounts). Only the hash is memoised, never the verdict: whether the key or token is live (revoked,
 * rotated out, expired) is asked of the store on every request, so a revocation takes effect at once.
 * A malformed secret is not remembered (a flood of garbage cannot fill the memo); well-formed ones that are
 * unknown are, bounded by MAX_ENTRIES (then cleared). The secrets sit in this process's memory as the
 * request headers carrying them already do.
 */
export class SecretHashes {
  private readonly known = new Map<string, string>();

  constructor(private readonly prefix: string) {}

  /** The hash to look the secret up by, or null when it is not a well-formed secret of this kind. */
  of(secret: string): string | null {
    const hit = this.known.get(secret);
    if (hit !== undefined) return hit;
    if (!wellFormed(secret, this.prefix)) return null;
    const hash = hashSecret(secret);
    if (this.known.size >= MAX_ENTRIES) this.known.clear();
    this.known.set(secret, hash);
    return hash;
  }
}
