import type { Logger } from 'pino';
import { correlationTag } from '../domain/correlation.js';
import { withDefaults } from '../domain/copy-rule.js';
import type { Store } from '../store/store.js';
import type { CopyIntent, Trade } from '../domain/ledger-types.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';
import type { TradeLike } from './ledger.js';
import { outcomeWrite } from './outcome-ledger.js';
import { opOf, verifyOp } from './intent-ops.js';
import { actionEvents } from './action-events.js';
import { goesStale, intentAction } from '../domain/intent-action.js';
import { recoverOrderTrade, type RecoveryResult } from './order-recovery.js';
import { TagSnapshot } from './tag-snapshot.js';
import { settleChains } from './settle-chains.js';
import type { BrokerAdapter } from '../platforms/adapter.js';

/** Chains of one Slave settled at once; the adapter's pacer still keeps the broker's rate. */
const CHAINS_PER_SLAVE = 8;

export interface SettleReport {
  checked: number;
  confirmed: number;
  resent: number;
  rejected: number;
  unknown: number;
  /** Order-route trades whose Master outcome was settled this pass: fanned out, rejected, still unknown. */
  orders: Record<RecoveryResult, number>;
}

export interface SettlerOptions {
  graceMs?: number;
  everyMs?: number;
  logger?: Logger | false;
  /** A Master order looked up and not found is called absent only once its trade is this old (default 30 s). */
  absentAfterMs?: number;
  /** Whose ledger this process settles (a worker: the Masters whose lease it holds). Default: all. */
  owns?: (masterAccountId: string) => boolean;
}

/**
 * Settles every write whose outcome is unknown: timed out (`unresolved`), or `planned`/`sent` when the
 * process stopped before the answer was written. Looks at the broker first, always: found -> confirmed
 * (and linked); proven absent and still fresh -> sent again under a new deterministic tag (attempt + 1);
 * proven absent and stale -> rejected with the reason. Never a blind retry.
 */
export class Settler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SettleReport> | null = null;
  private nudged: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly engine: CopyEngine,
    private readonly opts: SettlerOptions = {},
  ) {}

  start(): void {
    this.timer = setInterval(
      () =>
        void this.runOnce().catch(
          (err: unknown) => this.opts.logger && this.opts.logger.error({ err }, 'settle loop failed'),
        ),
      this.opts.everyMs ?? 2000,
    );
    this.timer.unref();
  }

  /**
   * A pass soon (once the grace has passed), not only on the schedule: a write that timed out under a burst is
   * settled while its action is still fresh enough to resend. Calls while one is due or running coalesce.
   */
  nudge(): void {
    if (this.nudged) return;
    this.nudged = setTimeout(
      () => {
        void (this.running ?? Promise.resolve())
          .catch(() => undefined)
          .then(() => {
            this.nudged = null;
            return this.runOnce();
          })
          .catch((err: unknown) => this.opts.logger && this.opts.logger.error({ err }, 'settle pass failed'));
      },
      (this.opts.graceMs ?? 1000) + 50,
    );
    this.nudged.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.nudged) clearTimeout(this.nudged);
    this.nudged = null;
    await this.running?.catch(() => undefined);
  }

  /** One pass; concurrent callers share the pass in progress. */
  runOnce(opts: { graceMs?: number } = {}): Promise<SettleReport> {
    if (!this.running)
      this.running = this.pass(opts.graceMs ?? this.opts.graceMs ?? 1000).finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async pass(graceMs: number): Promise<SettleReport> {
    const report: SettleReport = {
      checked: 0,
      confirmed: 0,
      resent: 0,
      rejected: 0,
      unknown: 0,
      orders: { fanned_out: 0, rejected: 0, unknown: 0, skipped: 0 },
    };
    const now = this.engine.clock();
    const owns = this.opts.owns ?? (() => true);
    // Order-route trades first: their fan-out writes the intents the rest of this pass may settle.
    for (const t of await this.store.trades.apiTradesAwaitingMaster()) {
      if (!owns(t.masterAccountId) || this.engine.ordering.has(t.id) || now - t.updatedAt.getTime() < graceMs) continue;
      try {
        report.orders[
          await recoverOrderTrade(this.store, this.adapters, this.engine, t, {
            absentAfterMs: this.opts.absentAfterMs ?? 30_000,
          })
        ]++;
      } catch (err) {
        report.orders.unknown++;
        if (this.opts.logger) this.opts.logger.error({ err, tradeId: t.id }, 'settling an order-route trade failed');
      }
    }
    // A crash between recording an action and marking it accepted: write that move, and its events, now.
    for (const t of await this.store.trades.tradesInStatus('recorded')) {
      if (!owns(t.masterAccountId) || this.engine.accepting.has(t.id) || now - t.updatedAt.getTime() < graceMs)
        continue;
      await this.store.trades.applyOutcomes([
        {
          trade: { id: t.id, set: { status: 'accepted' } },
          events: actionEvents(t, await this.store.trades.intentsOfTrade(t.id)),
        },
      ]);
    }
    const rows = (await this.store.trades.unsettledIntents()).filter(
      ({ intent, trade }) =>
        owns(trade.masterAccountId) &&
        !this.engine.inFlight.has(intent.id) &&
        now - intent.updatedAt.getTime() >= graceMs,
    );
    // Slaves in parallel; within a Slave, writes about one Master position in order (see chains()).
    const bySlave = new Map<string, Array<{ intent: CopyIntent; trade: Trade }>>();
    for (const r of rows) bySlave.set(r.intent.slaveAccountId, [...(bySlave.get(r.intent.slaveAccountId) ?? []), r]);
    await Promise.all(
      [...bySlave.values()].map(async (list) => {
        // One reading of the Slave's tags serves the whole list (see tag-snapshot.ts).
        const oldest = new Date(Math.min(...list.map((r) => r.intent.createdAt.getTime())));
        let snapshot: TagSnapshot | null = null;
        const lookups = (adapter: BrokerAdapter) => {
          snapshot ??= new TagSnapshot(adapter, oldest, this.engine.clock);
          return snapshot;
        };
        const settle = async (r: { intent: CopyIntent; trade: Trade }) => {
          if (this.engine.inFlight.has(r.intent.id)) return;
          this.engine.inFlight.add(r.intent.id);
          try {
            report.checked++;
            report[await this.settleOne(r.intent, r.trade, lookups)]++;
          } catch (err) {
            report.unknown++;
            if (this.opts.logger) this.opts.logger.error({ err, intentId: r.intent.id }, 'settling an intent failed');
          } finally {
            this.engine.inFlight.delete(r.intent.id);
          }
        };
        const chains = await this.chains(list);
        let next = 0;
        await Promise.all(
          Array.from({ length: Math.min(CHAINS_PER_SLAVE, chains.length) }, async () => {
            while (next < chains.length) for (const r of chains[next++]!) await settle(r);
          }),
        );
      }),
    );
    return report;
  }

  /** A Slave's rows as chains (settle-chains.ts); one chain where the account cannot be read. */
  private async chains(
    list: Array<{ intent: CopyIntent; trade: Trade }>,
  ): Promise<Array<Array<{ intent: CopyIntent; trade: Trade }>>> {
    const account = await this.store.accounts.byId(list[0]!.intent.slaveAccountId);
    const adapter = account ? await this.adapters.forAccount(account).catch(() => null) : null;
    return settleChains(list, adapter?.capabilities.hedging ?? false);
  }

  private async settleOne(
    intent: CopyIntent,
    trade: Trade,
    lookups: (adapter: BrokerAdapter) => TagSnapshot,
  ): Promise<'confirmed' | 'resent' | 'rejected' | 'unknown'> {
    const [slaveAcc, master] = await Promise.all([
      this.store.accounts.byId(intent.slaveAccountId),
      this.store.accounts.byId(trade.masterAccountId),
    ]);
    if (!slaveAcc || !master) return 'unknown';
    const rule = (await this.store.accounts.rulesFor([slaveAcc.id])).get(slaveAcc.id) ?? withDefaults(undefined);
    const adapter = await this.adapters.forAccount(slaveAcc).catch(() => null);
    if (!adapter) return 'unknown';
    const slave = { account: slaveAcc, rule, adapter };
    const actionAt = trade.actionAt ?? trade.createdAt;
    const fresh = this.engine.clock() - actionAt.getTime() <= rule.maxDelayMs;
    const link = intent.targetId
      ? ((await this.store.trades.openLinksOfSlave(slaveAcc.id)).find((l) => l.slavePositionId === intent.targetId) ??
        null)
      : null;
    const origTag =
      intent.action === 'order_filled' && link?.intentId
        ? ((await this.store.trades.intentById(link.intentId))?.tag ?? null)
        : null;
    const extra = { origTag, fresh, linkVolume: link?.volume ?? null };
    const op = opOf(intent, trade, rule, extra);
    const prevTags = Array.isArray(intent.prevTags) ? (intent.prevTags as string[]) : [];
    const t: TradeLike = {
      orderType: trade.orderType,
      masterPositionId: trade.masterPositionId,
      masterOrderId: trade.masterOrderId,
      fillPrice: trade.fillPrice,
      side: trade.side,
      actionAt,
    };
    const snapshot = lookups(adapter);
    const v = await verifyOp(adapter, op, [intent.tag, ...prevTags], (tag) => snapshot.find(tag));
    if (v.state === 'unknown') return 'unknown';
    if (v.state === 'applied') {
      await this.store.trades.applyOutcomes([
        outcomeWrite(master, trade.id, t, intent, slave.account.id, op, v.outcome, { prevTags }),
      ]);
      return v.outcome.kind === 'confirmed' ? 'confirmed' : 'rejected';
    }
    if (!fresh && goesStale(intentAction(intent.action))) {
      const outcome = {
        kind: 'rejected' as const,
        code: 'stale_unresolved',
        message: `not at the broker, and the action is ${this.engine.clock() - actionAt.getTime()} ms old (rule allows ${rule.maxDelayMs} ms): not resent`,
      };
      await this.store.trades.applyOutcomes([
        outcomeWrite(master, trade.id, t, intent, slave.account.id, op, outcome, { prevTags }),
      ]);
      return 'rejected';
    }
    // Proven absent and still fresh: a new attempt under a new tag, so a late arrival of the old one is told apart.
    const attempt = intent.attempts + 1;
    const tag = correlationTag({
      tradeId: trade.id,
      accountId: slaveAcc.id,
      action: `${intent.action}:${intent.targetId ?? ''}`,
      attempt,
    });
    const row: CopyIntent = { ...intent, tag };
    const resendOp = opOf(row, trade, rule, extra);
    await this.store.trades.updateIntent(intent.id, {
      state: 'sent',
      attempts: attempt,
      tag,
      prevTags: [...prevTags, intent.tag],
    });
    await this.engine.sendOp(
      master,
      trade.id,
      t,
      row,
      slave,
      resendOp,
      attempt,
      { ...((intent.latency as Record<string, number>) ?? {}) },
      performance.now(),
      [...prevTags, intent.tag],
    );
    return 'resent';
  }
}
