import type { Logger } from 'pino';
import { Decimal } from '../domain/decimal.js';
import { correlationTag } from '../domain/correlation.js';
import { withDefaults } from '../domain/copy-rule.js';
import type { Store } from '../store/store.js';
import type { IntentRow, TradeRow } from '../store/repos/trades.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';
import type { TradeLike } from './ledger.js';
import { outcomeWrite } from './outcome-ledger.js';
import { opOf, verifyOp } from './intent-ops.js';
import { actionEvents } from './action-events.js';
import { goesStale, intentAction } from '../domain/intent-action.js';
import { recoverOrderTrade, type RecoveryResult } from './order-recovery.js';

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
    // Per Slave in order, Slaves in parallel: a resend and the next lookup of one account never cross.
    const bySlave = new Map<string, Array<{ intent: IntentRow; trade: TradeRow }>>();
    for (const r of rows) bySlave.set(r.intent.slaveAccountId, [...(bySlave.get(r.intent.slaveAccountId) ?? []), r]);
    await Promise.all(
      [...bySlave.values()].map(async (list) => {
        for (const r of list) {
          if (this.engine.inFlight.has(r.intent.id)) continue;
          this.engine.inFlight.add(r.intent.id);
          try {
            report.checked++;
            report[await this.settleOne(r.intent, r.trade)]++;
          } catch (err) {
            report.unknown++;
            if (this.opts.logger) this.opts.logger.error({ err, intentId: r.intent.id }, 'settling an intent failed');
          } finally {
            this.engine.inFlight.delete(r.intent.id);
          }
        }
      }),
    );
    return report;
  }

  private async settleOne(
    intent: IntentRow,
    trade: TradeRow,
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
    const extra = { origTag, fresh, linkVolume: link?.volume ? new Decimal(link.volume) : null };
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
    const v = await verifyOp(adapter, op, [intent.tag, ...prevTags]);
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
    const row: IntentRow = { ...intent, tag };
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
