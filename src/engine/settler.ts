import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import type { CopyIntent, Trade } from '../domain/ledger-types.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';
import { actionEvents } from './action-events.js';
import { settleOne, type SettleDeps } from './settle-one.js';
import { recoverOrderTrade, type RecoveryResult } from './order-recovery.js';
import { TagSnapshot } from './tag-snapshot.js';
import { settleChains } from './settle-chains.js';
import type { BrokerAdapter } from '../platforms/adapter.js';

type Row = { intent: CopyIntent; trade: Trade };
type Owns = (masterAccountId: string) => boolean;

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
  /** The pass in progress: its lookups and writes, not the resends it handed out (see `pass`). */
  private running: Promise<SettleReport> | null = null;
  /** The same pass until its resends have their outcomes too: what `runOnce` callers wait for. */
  private finished: Promise<SettleReport> | null = null;
  private nudged: NodeJS.Timeout | null = null;
  /** Resends on the wire that their pass did not wait for (stop() does). */
  private readonly resending = new Set<Promise<unknown>>();
  /** Their rows: a later row of the same chain waits for the next pass after the outcome (order kept). */
  private readonly resendingIds = new Set<string>();
  private readonly deps: SettleDeps;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly engine: CopyEngine,
    private readonly opts: SettlerOptions = {},
  ) {
    this.deps = { store, adapters, engine };
  }

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
            this.startPass(this.opts.graceMs ?? 1000);
            return this.running;
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
    while (this.resending.size > 0) await Promise.allSettled([...this.resending]);
  }

  /**
   * One pass, resolved once every resend it made has its outcome too (a caller settles before it reconciles or
   * copies); concurrent callers share the pass in progress.
   */
  runOnce(opts: { graceMs?: number } = {}): Promise<SettleReport> {
    this.startPass(opts.graceMs ?? this.opts.graceMs ?? 1000);
    return this.finished!;
  }

  /** Starts a pass unless one is running. The next pass may start while this one's resends are on the wire. */
  private startPass(graceMs: number): void {
    if (this.running) return;
    const detached: Array<Promise<unknown>> = [];
    const pass = this.pass(graceMs, detached);
    this.running = pass.finally(() => {
      this.running = null;
    });
    // The pass's error reaches runOnce callers through `finished`; this copy of it is only waited on (stop, nudge),
    // and left unhandled it ends the process (seen with the store closed under a running service).
    this.running.catch(() => undefined);
    this.finished = pass.then(async (report) => {
      await Promise.allSettled(detached);
      return report;
    });
    // Read by runOnce callers; a background pass nobody waits for must not report an unhandled rejection.
    this.finished.catch(() => undefined);
  }

  /**
   * A resend that ends its chain is not waited for: its outcome is written by the engine (an unresolved one
   * nudges the next pass), and the row stays in the engine's in-flight set until then. Waiting for it held the
   * whole pass, every Slave's, for the slowest connection's write, and a write that timed out meanwhile waited
   * for that pass to end before a pass could look at it: under a burst on a loaded machine, past the rule's
   * staleness limit (`stale_unresolved`). A resend followed by more rows of its chain is still waited for, so the
   * writes about one Master position keep their order.
   */
  private async pass(graceMs: number, detached: Array<Promise<unknown>>): Promise<SettleReport> {
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
    await this.recoverOrders(report, now, owns, graceMs);
    await this.acceptRecorded(now, owns, graceMs);
    // Rows of our own resends stay in the list only to hold back the rest of their chain.
    const rows = (await this.store.trades.unsettledIntents()).filter(
      ({ intent, trade }) =>
        owns(trade.masterAccountId) &&
        (this.resendingIds.has(intent.id) || this.engine.claims.settleMayTakeIntent(intent, now, graceMs)),
    );
    // Slaves in parallel; within a Slave, writes about one Master position in order (see chains()).
    const bySlave = new Map<string, Row[]>();
    for (const r of rows) bySlave.set(r.intent.slaveAccountId, [...(bySlave.get(r.intent.slaveAccountId) ?? []), r]);
    await Promise.all([...bySlave.values()].map((list) => this.settleSlave(list, report, detached)));
    return report;
  }

  private async recoverOrders(report: SettleReport, now: number, owns: Owns, graceMs: number): Promise<void> {
    for (const t of await this.store.trades.apiTradesAwaitingMaster()) {
      if (!owns(t.masterAccountId) || !this.engine.claims.settleMayTakeOrderRoute(t, now, graceMs)) continue;
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
  }

  /** A crash between recording an action and marking it accepted: write that move, and its events, now. */
  private async acceptRecorded(now: number, owns: Owns, graceMs: number): Promise<void> {
    for (const t of await this.store.trades.tradesInStatus('recorded')) {
      if (!owns(t.masterAccountId) || !this.engine.claims.settleMayAccept(t, now, graceMs)) continue;
      await this.store.trades.applyOutcomes([
        {
          trade: { id: t.id, set: { status: 'accepted' } },
          events: actionEvents(t, await this.store.trades.intentsOfTrade(t.id)),
        },
      ]);
    }
  }

  /** One Slave's rows: a few chains at a time, each chain's rows in order. */
  private async settleSlave(list: Row[], report: SettleReport, detached: Array<Promise<unknown>>): Promise<void> {
    // One reading of the Slave's tags serves the whole list (see tag-snapshot.ts).
    const oldest = new Date(Math.min(...list.map((r) => r.intent.createdAt.getTime())));
    let snapshot: TagSnapshot | null = null;
    const lookups = (adapter: BrokerAdapter) => {
      snapshot ??= new TagSnapshot(adapter, oldest, this.engine.clock);
      return snapshot;
    };
    const chains = await this.chains(list);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(CHAINS_PER_SLAVE, chains.length) }, async () => {
        while (next < chains.length) {
          const chain = chains[next++]!;
          if (chain.some((r) => this.resendingIds.has(r.intent.id))) continue;
          for (const [i, r] of chain.entries())
            await this.settleRow(r, i === chain.length - 1, lookups, report, detached);
        }
      }),
    );
  }

  /** One row, unless the engine (or another lane) holds it; a resend that ends its chain is detached. */
  private async settleRow(
    r: Row,
    last: boolean,
    lookups: (adapter: BrokerAdapter) => TagSnapshot,
    report: SettleReport,
    detached: Array<Promise<unknown>>,
  ): Promise<void> {
    if (!this.engine.claims.tryHoldIntent(r.intent.id)) return;
    let resend: Promise<unknown> | null = null;
    try {
      // The pass read its rows at its start; a write whose answer came after the grace may have been finished
      // by the engine since (outcome written, row let go). Settled from the old row, it would cost a useless
      // lookup at the broker and end in a transition the store refuses, logged as a failure.
      const now = await this.store.trades.intentById(r.intent.id);
      if (!now || now.state !== r.intent.state || now.updatedAt.getTime() !== r.intent.updatedAt.getTime()) return;
      report.checked++;
      const settled = await settleOne(this.deps, r.intent, r.trade, lookups);
      report[settled.result]++;
      resend = settled.resend ?? null;
      if (resend && !last) await resend;
    } catch (err) {
      report.unknown++;
      if (this.opts.logger) this.opts.logger.error({ err, intentId: r.intent.id }, 'settling an intent failed');
    } finally {
      if (resend && last) this.detach(r.intent.id, resend, detached);
      else this.engine.claims.releaseIntent(r.intent.id);
    }
  }

  /** Keeps a resend's row in flight until its outcome is written, and visible to stop() and the dispatcher's drain. */
  private detach(intentId: string, resend: Promise<unknown>, detached: Array<Promise<unknown>>): void {
    const done = resend
      .catch((err: unknown) => {
        if (this.opts.logger) this.opts.logger.error({ err, intentId }, 'a settle resend failed');
      })
      .finally(() => {
        this.engine.claims.releaseIntent(intentId);
        this.resendingIds.delete(intentId);
        this.resending.delete(done);
      });
    this.resending.add(done);
    this.resendingIds.add(intentId);
    detached.push(done);
    void this.engine.dispatcher.track(done);
  }

  /** A Slave's rows as chains (settle-chains.ts); one chain where the account cannot be read. */
  private async chains(list: Row[]): Promise<Array<Row[]>> {
    const account = await this.store.accounts.byId(list[0]!.intent.slaveAccountId);
    const adapter = account ? await this.adapters.forAccount(account).catch(() => null) : null;
    return settleChains(list, adapter?.capabilities.hedging ?? false);
  }
}
