import { newId } from '../../domain/ids.js';
import { AppError } from '../../domain/errors.js';

/**
 * Half-finished connection flows (credentials entered, account not yet picked). In memory, for minutes:
 * a restart only makes the user start the wizard again, and nothing secret outlives the process.
 * One process only: behind several API processes the wizard must stick to one (or this moves to the store).
 */
export class ConnectionSessions<T extends { userId: string }> {
  private readonly items = new Map<string, { value: T; expiresAt: number }>();

  constructor(private readonly ttlMs = 10 * 60_000) {}

  put(value: T): string {
    this.sweep();
    const id = newId('act').replace('act_', 'con_');
    this.items.set(id, { value, expiresAt: Date.now() + this.ttlMs });
    return id;
  }

  /** The session of this user; another user's id is the same 404 as an expired one. */
  get(userId: string, id: string): T {
    const s = this.items.get(id);
    if (!s || s.expiresAt < Date.now() || s.value.userId !== userId)
      throw new AppError('not_found', 'connection not found or expired; start the connection again');
    return s.value;
  }

  /** For the OAuth callback, which arrives without a bearer token: the unguessable id is the capability. */
  peek(id: string): T | null {
    const s = this.items.get(id);
    return s && s.expiresAt >= Date.now() ? s.value : null;
  }

  update(id: string, value: T): void {
    const s = this.items.get(id);
    if (s) s.value = value;
  }

  delete(id: string): void {
    this.items.delete(id);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, v] of this.items) if (v.expiresAt < now) this.items.delete(k);
  }
}
