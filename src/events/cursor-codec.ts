import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';

/** The first half of every plain cursor block: a wrong key or a made-up cursor decrypts to anything else. */
const MAGIC = Buffer.from('ctevcur1', 'ascii');
const CACHE_MAX = 10_000;

/**
 * The events routes' cursors. Inside, a cursor is the event's place in the outbox: one sequence over all users,
 * so handing it out as a number told every user how many events everybody else produced between two of theirs
 * (issue 46, finding 7). Outside, it is that number encrypted with a key of the user's own: one AES block
 * (magic + position), so it is fixed-length, opaque, and means nothing to (and is refused for) another user.
 * Deterministic on purpose: the same event always has the same cursor, so a stream's `id:` and the list's
 * `cursor` agree and a client may compare them for equality, never for order.
 */
export class EventCursors {
  private readonly userKeys = new Map<string, Buffer[]>();

  /** `keys`: the current key first, then keys still accepted (a credential key rotation in progress). */
  constructor(private readonly keys: Buffer[]) {
    if (keys.length === 0 || keys.some((k) => k.length !== 32)) throw new Error('event cursor keys must be 32 bytes');
  }

  encode(userId: string, position: number): string {
    const block = Buffer.alloc(16);
    MAGIC.copy(block, 0);
    block.writeBigUInt64BE(BigInt(position), 8);
    const c = createCipheriv('aes-256-ecb', this.keysOf(userId)[0]!, null).setAutoPadding(false);
    return Buffer.concat([c.update(block), c.final()]).toString('base64url');
  }

  /** The outbox position, or null when `cursor` is not one of this user's cursors. `0`: before the first event. */
  decode(userId: string, cursor: string): number | null {
    if (cursor === '0') return 0;
    if (!/^[A-Za-z0-9_-]{22}$/.test(cursor)) return null;
    const sealed = Buffer.from(cursor, 'base64url');
    for (const key of this.keysOf(userId)) {
      const d = createDecipheriv('aes-256-ecb', key, null).setAutoPadding(false);
      const block = Buffer.concat([d.update(sealed), d.final()]);
      if (!block.subarray(0, 8).equals(MAGIC)) continue;
      const position = block.readBigUInt64BE(8);
      return position <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(position) : null;
    }
    return null;
  }

  private keysOf(userId: string): Buffer[] {
    let keys = this.userKeys.get(userId);
    if (!keys) {
      keys = this.keys.map((k) => createHmac('sha256', k).update(`event-cursor:${userId}`).digest());
      if (this.userKeys.size >= CACHE_MAX) this.userKeys.clear();
      this.userKeys.set(userId, keys);
    }
    return keys;
  }
}
