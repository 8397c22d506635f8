import type { Account } from '../../domain/account.js';
import type { Health } from '../../domain/types.js';
import { toAccountJson } from '../schemas.js';

/** One user's list as the route sends it: each account serialized once, in id order (the paging order). */
interface View {
  /** The store's account objects this view was made from (the store replaces an object when it changes). */
  source: Account[];
  /** Index into `source` of each account, in id order, and the ids in that order (for the cursor's search). */
  order: number[];
  ids: string[];
  /**
   * JSON of `source[i]` as UTF-8, exactly as the route's response schema would write it; made when a page first
   * shows the account (a first request at 10,000 accounts built them all: ~300 ms of the event loop at load).
   */
  parts: Array<Buffer | undefined>;
  /** The whole list's body, kept until an account of the view changes. */
  whole: Buffer | null;
}

/**
 * `GET /v1/accounts` from text built once: each account's JSON is kept until the store hands out a new object for
 * it (a write of that account replaces its cached object, see AccountsRepo), so a health round re-serializes only
 * the accounts it changed and a page is a copy of bytes. The store's list is the truth on every request; this
 * only avoids rebuilding and re-serializing what did not change.
 *
 * Bytes, not strings: a 50 KB string handed to the socket is encoded to UTF-8 again on every write (and measured
 * for Content-Length), which was the largest single cost of the route (a third of its CPU under load, see
 * docs/performance.md); a Buffer goes to the socket as it is.
 */
export class AccountListCache {
  private readonly views = new Map<string, View>();

  /** The body of a page: accounts with id after `after`, at most `limit` (+1 id to tell whether more follow). */
  page(
    userId: string,
    accounts: Account[],
    after: string | undefined,
    limit: number,
  ): { ids: string[]; body: (ids: string[]) => Buffer } {
    const v = this.view(userId, accounts);
    let from = 0;
    if (after !== undefined) {
      // First id above the cursor (ids sort as strings, as pageOf compares them).
      let lo = 0;
      let hi = v.ids.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (v.ids[mid]! <= after) lo = mid + 1;
        else hi = mid;
      }
      from = lo;
    }
    const whole = after === undefined && limit >= v.ids.length;
    const ids = whole ? v.ids : v.ids.slice(from, from + limit + 1);
    return {
      ids,
      body: (shown) => {
        if (whole && shown.length === v.ids.length) return (v.whole ??= wrap(v.order.map((i) => part(v, i))));
        // `shown` is the head of `ids` (finishPage drops only the look-ahead id), so it maps to the same positions.
        const at = new Map<string, number>();
        for (let k = from; k < from + shown.length; k++) at.set(v.ids[k]!, v.order[k]!);
        return wrap(shown.map((id) => part(v, at.get(id)!)));
      },
    };
  }

  private view(userId: string, accounts: Account[]): View {
    const prev = this.views.get(userId);
    if (prev && prev.source.length === accounts.length) {
      // One pass, no callbacks: at 10,000 accounts this scan runs on every request and was most of the route's
      // CPU when it was two (a profile of `npm run bench scale-10k`). Same object: unchanged; a new object with
      // the same id: re-serialized; another id at that place: the list changed shape, built again below.
      const src = prev.source;
      let changed: number[] | null = null;
      let same = true;
      for (let i = 0; i < accounts.length; i++) {
        const a = accounts[i]!;
        const was = src[i]!;
        if (was === a) continue;
        if (was.id !== a.id) {
          same = false;
          break;
        }
        (changed ??= []).push(i);
      }
      if (same) {
        if (changed) {
          for (const i of changed) prev.parts[i] = undefined;
          prev.source = accounts;
          prev.whole = null;
        }
        return prev;
      }
    }
    const order = accounts.map((_, i) => i).sort((a, b) => cmp(accounts[a]!.id, accounts[b]!.id));
    const v: View = {
      source: accounts,
      order,
      ids: order.map((i) => accounts[i]!.id),
      parts: new Array<Buffer | undefined>(accounts.length),
      whole: null,
    };
    this.views.set(userId, v);
    return v;
  }
}

/** A page's body from accounts read for it alone (the user's list not held, see AccountsRepo.listPage). */
export const pageBody = (accounts: Account[]): Buffer => wrap(accounts.map(accountText));

const part = (v: View, i: number): Buffer => (v.parts[i] ??= accountText(v.source[i]!));
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const OPEN = Buffer.from('{"accounts":[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

function wrap(parts: Buffer[]): Buffer {
  const chunks: Buffer[] = [OPEN];
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) chunks.push(COMMA);
    chunks.push(parts[i]!);
  }
  chunks.push(CLOSE);
  return Buffer.concat(chunks);
}

/** Field for field what AccountSchema lets through (its HealthSchema drops anything else stored in health). */
function accountText(a: Account): Buffer {
  return Buffer.from(JSON.stringify({ ...toAccountJson(a), health: healthJson(a.health) }));
}

const healthJson = (h: Health) => ({
  state: h.state,
  connected: h.connected,
  tradingAllowed: h.tradingAllowed,
  inSync: h.inSync,
  dataStale: h.dataStale,
  reconnectRequired: h.reconnectRequired,
  checkedAt: h.checkedAt ?? null,
  lastError: h.lastError ?? null,
});
