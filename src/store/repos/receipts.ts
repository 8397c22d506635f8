import { and, asc, eq, gt, gte, inArray, lte, sql } from 'drizzle-orm';
import type { CopyIntent, Trade } from '../../domain/ledger-types.js';
import {
  ENDED_STATES,
  GENESIS,
  headMessage,
  receiptBody,
  receiptHash,
  type StoredReceipt,
} from '../../domain/receipts/chain.js';
import type { Db } from '../db.js';
import { intentFromRow, tradeFromRow } from '../ledger-mappers.js';
import { rowsOf } from '../rows-of.js';
import { accounts, copyIntents, receiptChains, receiptHeads, receipts, trades } from '../schema.js';

export interface ReceiptRow extends StoredReceipt {
  userId: string;
  intentId: string;
  createdAt: Date;
}

export interface ReceiptHead {
  accountId: string;
  day: string;
  seq: number;
  hash: string;
  keyId: string;
  signature: string;
  signedAt: Date;
}

export interface HeadSigner {
  keyId: string;
  sign(message: string): string;
}

const ENDED = sql.raw(ENDED_STATES.map((s) => `'${s}'`).join(', '));

/**
 * The receipts store (docs/receipts.md): append-only chains per Slave account, their signed day heads, and the reads
 * a verify needs. Appending locks the account's chain row, so two processes sealing at once never fork a chain: the
 * second waits, then finds the rows the first sealed already have their receipts.
 */
export class ReceiptsRepo {
  constructor(private readonly db: Db) {}

  /** Slave accounts with ended rows, older than `graceMs`, that have no receipt yet (a scan of the ledger). */
  async accountsToSeal(graceMs: number, limit: number): Promise<string[]> {
    const rows = await this.db.execute(
      sql`select distinct i.slave_account_id as id from copy_intents i
          where i.state in (${ENDED}) and i.updated_at < now() - make_interval(secs => ${graceMs / 1000})
            and not exists (select 1 from receipts r where r.intent_id = i.id)
          order by 1 limit ${limit}`,
    );
    return rowsOf<{ id: string }>(rows).map((r) => r.id);
  }

  /**
   * Appends receipts for up to `limit` of the account's ended, unsealed rows (older than `graceMs`), in the order
   * they ended (then by id), and signs the head of the day they are sealed on. One transaction under the chain's
   * row lock. Returns how many it sealed.
   */
  async seal(accountId: string, opts: { graceMs: number; limit: number; signer: HeadSigner }): Promise<number> {
    return this.db.transaction(async (tx) => {
      const [owner] = await tx.select({ userId: accounts.userId }).from(accounts).where(eq(accounts.id, accountId));
      if (!owner) return 0;
      await tx.insert(receiptChains).values({ accountId, seq: 0, hash: GENESIS }).onConflictDoNothing();
      const locked = await tx.execute(
        sql`select seq, hash, to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as day from receipt_chains
            where account_id = ${accountId} for update`,
      );
      const chain = rowsOf<{ seq: number; hash: string; day: string }>(locked)[0]!;
      const rows = await tx
        .select()
        .from(copyIntents)
        .where(
          and(
            eq(copyIntents.slaveAccountId, accountId),
            sql`${copyIntents.state} in (${ENDED})`,
            sql`${copyIntents.updatedAt} < now() - make_interval(secs => ${opts.graceMs / 1000})`,
            sql`not exists (select 1 from receipts r where r.intent_id = ${copyIntents.id})`,
          ),
        )
        .orderBy(asc(copyIntents.updatedAt), asc(copyIntents.id))
        .limit(opts.limit);
      if (rows.length === 0) return 0;
      const intents = rows.map(intentFromRow);
      const byTrade = await tradesOf(tx as unknown as Db, intents);
      let { seq, hash } = chain;
      const out: Array<typeof receipts.$inferInsert> = [];
      for (const intent of intents) {
        seq += 1;
        const body = receiptBody(
          { account: accountId, seq, day: chain.day },
          intent,
          byTrade.get(intent.tradeId) ?? null,
        );
        const next = receiptHash(hash, body);
        out.push({
          id: `rcp_${next.slice(0, 32)}`,
          accountId,
          userId: owner.userId,
          seq,
          intentId: intent.id,
          day: chain.day,
          prevHash: hash,
          hash: next,
          body,
        });
        hash = next;
      }
      await tx.insert(receipts).values(out);
      await tx
        .update(receiptChains)
        .set({ seq, hash, updatedAt: new Date() })
        .where(eq(receiptChains.accountId, accountId));
      const head = { account: accountId, day: chain.day, seq, hash, keyId: opts.signer.keyId };
      const signature = opts.signer.sign(headMessage(head));
      const set = { seq, hash, keyId: head.keyId, signature, signedAt: new Date() };
      await tx
        .insert(receiptHeads)
        .values({ accountId, day: chain.day, ...set })
        .onConflictDoUpdate({ target: [receiptHeads.accountId, receiptHeads.day], set });
      return out.length;
    });
  }

  async get(id: string): Promise<ReceiptRow | null> {
    const [r] = await this.db.select().from(receipts).where(eq(receipts.id, id)).limit(1);
    return r ?? null;
  }

  /** An account's receipts with seq > `afterSeq` and day in [fromDay, toDay], in chain order. */
  async page(
    accountId: string,
    o: { afterSeq?: number; fromDay?: string; toDay?: string; limit: number },
  ): Promise<ReceiptRow[]> {
    return this.db
      .select()
      .from(receipts)
      .where(
        and(
          eq(receipts.accountId, accountId),
          gt(receipts.seq, o.afterSeq ?? 0),
          o.fromDay ? gte(receipts.day, o.fromDay) : undefined,
          o.toDay ? lte(receipts.day, o.toDay) : undefined,
        ),
      )
      .orderBy(asc(receipts.seq))
      .limit(o.limit);
  }

  /** The receipt just before `seq` in the account's chain (what a run starting at `seq` links to). */
  async at(accountId: string, seq: number): Promise<ReceiptRow | null> {
    const [r] = await this.db
      .select()
      .from(receipts)
      .where(and(eq(receipts.accountId, accountId), eq(receipts.seq, seq)))
      .limit(1);
    return r ?? null;
  }

  async head(accountId: string, day: string): Promise<ReceiptHead | null> {
    const [h] = await this.db
      .select()
      .from(receiptHeads)
      .where(and(eq(receiptHeads.accountId, accountId), eq(receiptHeads.day, day)))
      .limit(1);
    return h ?? null;
  }

  async heads(accountId: string, fromDay?: string, toDay?: string): Promise<ReceiptHead[]> {
    return this.db
      .select()
      .from(receiptHeads)
      .where(
        and(
          eq(receiptHeads.accountId, accountId),
          fromDay ? gte(receiptHeads.day, fromDay) : undefined,
          toDay ? lte(receiptHeads.day, toDay) : undefined,
        ),
      )
      .orderBy(asc(receiptHeads.day));
  }

  /** Accounts that have a chain (every account a verify without --account covers), in id order. */
  async chainedAccounts(): Promise<string[]> {
    const rows = await this.db
      .select({ id: receiptChains.accountId })
      .from(receiptChains)
      .orderBy(asc(receiptChains.accountId));
    return rows.map((r) => r.id);
  }

  /** The chain row's own record of the last receipt (a truncated chain ends before it). */
  async chainEnd(accountId: string): Promise<{ seq: number; hash: string } | null> {
    const [c] = await this.db
      .select({ seq: receiptChains.seq, hash: receiptChains.hash })
      .from(receiptChains)
      .where(eq(receiptChains.accountId, accountId));
    return c ?? null;
  }

  /** The ledger rows (and their trades) receipts name, as they are now: what a verify compares each receipt to. */
  async ledgerOf(intentIds: string[]): Promise<{ intents: Map<string, CopyIntent>; trades: Map<string, Trade> }> {
    if (intentIds.length === 0) return { intents: new Map(), trades: new Map() };
    const rows = (await this.db.select().from(copyIntents).where(inArray(copyIntents.id, intentIds))).map(
      intentFromRow,
    );
    return { intents: new Map(rows.map((i) => [i.id, i])), trades: await tradesOf(this.db, rows) };
  }

  /** Ended rows of an account, older than `graceMs`, without a receipt: sealed late, or inserted behind the chain. */
  async unsealedCount(accountId: string, graceMs: number): Promise<number> {
    const r = await this.db.execute(
      sql`select count(*)::int as n from copy_intents i where i.slave_account_id = ${accountId}
            and i.state in (${ENDED}) and i.updated_at < now() - make_interval(secs => ${graceMs / 1000})
            and not exists (select 1 from receipts r where r.intent_id = i.id)`,
    );
    return rowsOf<{ n: number }>(r)[0]?.n ?? 0;
  }
}

async function tradesOf(db: Db, intents: CopyIntent[]): Promise<Map<string, Trade>> {
  const ids = [...new Set(intents.map((i) => i.tradeId))];
  if (ids.length === 0) return new Map();
  const rows = await db.select().from(trades).where(inArray(trades.id, ids));
  return new Map(rows.map((r) => [r.id, tradeFromRow(r)]));
}
