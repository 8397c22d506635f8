import type { Account } from '../../domain/account.js';
import { Decimal } from '../../domain/decimal.js';
import { quoteToAccount } from '../../domain/quote-currency.js';
import type { InstrumentSpec, OrderType, Side } from '../../domain/types.js';
import type { RiskLimitsRepo, RiskRow } from '../../store/repos/risk-limits.js';
import type { Store } from '../../store/store.js';
import type { RevisionWho } from '../../store/repos/rule-revisions.js';
import type { AdapterRegistry } from '../adapter-registry.js';
import type { PanicCloseService } from '../panic-close.js';
import { EMPTY_STATE, evaluate, remainingDailyLoss, type RiskState, type Sample } from './evaluate.js';
import { effectiveLimits, NO_LIMITS, type EffectiveLimits, type RiskLimits, type RiskRule } from './limits.js';
import { preTradeCheck } from './pre-trade.js';

/**
 * What the risk guard needs from the copy engine's pre-trade hook (structurally the engine's PreTradeContext,
 * of which it reads only these fields).
 */
export interface CopyCheckContext {
  slave: Account;
  symbol: string;
  side: Side;
  type: OrderType;
  volume: Decimal;
  price: Decimal | null;
  stopLoss: Decimal | null;
  spec: InstrumentSpec;
}
export type CopyCheckDecision = { ok: true; volume?: Decimal } | { ok: false; code: string; message: string };

export interface RiskGuardOptions {
  /** A sample younger than this is reused by the pre-trade check instead of asking the broker again. */
  sampleMaxAgeMs?: number;
  clock?: () => Date;
  onError?: (err: unknown) => void;
}

type Row = RiskRow<RiskLimits, RiskState>;

/**
 * Per-account risk limits (own and group's): a monitor samples equity and open volume through the adapters
 * on a schedule and on each copy, and on a breach pauses copying, or panic-closes and locks, as configured;
 * the pre-trade check shrinks or skips copies that would break the daily loss or open-volume limits.
 */
export class RiskGuard {
  readonly repo: RiskLimitsRepo;
  private readonly rows = new Map<string, Row>();
  private readonly samples = new Map<string, Sample>();
  private readonly acting = new Set<string>();
  private readonly clock: () => Date;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly panic: PanicCloseService,
    private readonly opts: RiskGuardOptions = {},
  ) {
    this.repo = store.riskLimits;
    this.clock = opts.clock ?? (() => new Date());
  }

  /** Reads every row; also at each tick, so limits set by another process take effect. */
  async load(): Promise<void> {
    const all = await this.repo.all<RiskLimits, RiskState>();
    this.rows.clear();
    for (const r of all) this.rows.set(r.targetId, r);
  }

  async setLimits(
    userId: string,
    scope: 'account' | 'group',
    targetId: string,
    limits: RiskLimits,
    resetPeak = false,
    /** Who sets them: the change becomes a rule revision of the target, written with the row (docs/what-if.md). */
    who?: RevisionWho,
  ): Promise<Row> {
    const prev = this.rows.get(targetId) ?? (await this.repo.get<RiskLimits, RiskState>(targetId));
    const state: RiskState = {
      ...EMPTY_STATE,
      ...(prev?.state ?? {}),
      ...(resetPeak ? { peakEquity: null, lastBreach: null } : {}),
    };
    const row: Row = { targetId, userId, scope, limits, state, updatedAt: this.clock() };
    if (who) await this.store.revisions.setLimits(who, scope, targetId, { limits, state });
    else await this.repo.upsert(row);
    this.rows.set(targetId, row);
    return row;
  }

  row(targetId: string): Row | null {
    return this.rows.get(targetId) ?? null;
  }

  limitsOf(account: Account): EffectiveLimits | null {
    const own = this.rows.get(account.id)?.limits ?? null;
    const group = account.groupId && account.role === 'slave' ? (this.rows.get(account.groupId)?.limits ?? null) : null;
    return effectiveLimits(own, group);
  }

  /** Reads equity and open volume at the broker, updates peak and day start, and acts on a breach. */
  async sample(
    account: Account,
  ): Promise<{ state: RiskState; breach: { rule: RiskRule; detail: string } | null } | null> {
    const limits = this.limitsOf(account);
    if (!limits) return null;
    const adapter = await this.adapters.forAccount(account);
    const [info, positions] = await Promise.all([adapter.accountInfo(), adapter.listPositions()]);
    const s: Sample = {
      equity: info.equity,
      openVolume: positions.reduce((a, p) => a.plus(p.volume), new Decimal(0)),
      at: this.clock(),
    };
    this.samples.set(account.id, s);
    const prev = this.rows.get(account.id);
    const { state, breach } = evaluate(limits, prev?.state ?? EMPTY_STATE, s);
    if (breach) await this.act(account, limits, breach, state);
    const row: Row = prev
      ? { ...prev, state }
      : { targetId: account.id, userId: account.userId, scope: 'account', limits: NO_LIMITS, state, updatedAt: s.at };
    this.rows.set(account.id, row);
    if (prev) await this.repo.setState(account.id, state);
    else await this.repo.upsert(row);
    return { state, breach };
  }

  private async act(
    account: Account,
    limits: EffectiveLimits,
    breach: { rule: RiskRule; detail: string },
    state: RiskState,
  ): Promise<void> {
    // Already off (paused, locked, or being acted on): one breach acts once; a resume while it lasts acts again.
    const current = await this.store.accounts.byId(account.id);
    if (!current || current.status !== 'connected' || this.acting.has(account.id)) return;
    this.acting.add(account.id);
    try {
      const base = { rule: breach.rule, detail: breach.detail, action: limits.onBreach };
      if (limits.onBreach === 'close_and_pause') {
        const job = await this.panic.start(account.userId, 'account', account.id, {
          reason: `risk ${breach.rule}: ${breach.detail}`,
        });
        await this.store.events.emit([
          {
            userId: account.userId,
            accountId: account.id,
            type: 'risk.triggered',
            payload: { ...base, jobId: job.id },
          },
        ]);
      } else {
        const reason = `risk ${breach.rule}: ${breach.detail}; resume to copy again`;
        await this.store.accounts.setStatus(account.id, 'paused', reason);
        await this.store.events.emit([
          { userId: account.userId, accountId: account.id, type: 'risk.triggered', payload: base },
          {
            userId: account.userId,
            accountId: account.id,
            type: 'account.status_changed',
            payload: { before: current.status, after: 'paused', reason },
          },
        ]);
      }
      state.lastBreach = { ...breach, at: this.clock().toISOString(), action: limits.onBreach };
    } finally {
      this.acting.delete(account.id);
    }
  }

  /** Every account with limits (its own, or its group's for a Slave). */
  async watched(): Promise<Account[]> {
    const out = new Map<string, Account>();
    for (const r of this.rows.values()) {
      if (r.scope === 'account') {
        const a = await this.store.accounts.byId(r.targetId);
        if (a && this.limitsOf(a)) out.set(a.id, a);
      } else {
        for (const a of await this.store.accounts.list(r.userId, { groupId: r.targetId }))
          if (a.role === 'slave' && this.limitsOf(a)) out.set(a.id, a);
      }
    }
    return [...out.values()];
  }

  async tick(): Promise<void> {
    await this.load();
    const accounts = await this.watched();
    await Promise.all(accounts.map((a) => this.sample(a).catch((err: unknown) => this.opts.onError?.(err))));
  }

  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.tick()
        .catch((err: unknown) => this.opts.onError?.(err))
        .finally(() => {
          this.ticking = null;
        });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /**
   * The copy engine's pre-trade hook. Uses a recent sample (or takes one, which may act on a breach), then
   * asks the pure check; what it lets through is counted against open volume until the next sample.
   */
  readonly check = async (ctx: CopyCheckContext): Promise<CopyCheckDecision> => {
    const limits = this.limitsOf(ctx.slave);
    if (!limits) return { ok: true };
    let s = this.samples.get(ctx.slave.id);
    const maxAge = this.opts.sampleMaxAgeMs ?? 2000;
    if (!s || this.clock().getTime() - s.at.getTime() > maxAge) {
      const r = await this.sample(ctx.slave).catch(() => null);
      if (r?.breach) return { ok: false, code: `risk_${r.breach.rule}`, message: r.breach.detail };
      s = this.samples.get(ctx.slave.id);
    }
    const state = this.rows.get(ctx.slave.id)?.state ?? EMPTY_STATE;
    const verdict = preTradeCheck({
      volume: ctx.volume,
      entryPrice: ctx.price,
      stopLoss: ctx.stopLoss,
      contractSize: ctx.spec.contractSize,
      volumeStep: ctx.spec.volumeStep,
      minVolume: ctx.spec.minVolume,
      quoteToAccount: quoteToAccount(ctx.symbol, ctx.slave.currency, ctx.price),
      openVolume: s?.openVolume ?? new Decimal(0),
      maxOpenVolume: limits.maxOpenVolume,
      remainingDailyLoss: remainingDailyLoss(limits, state),
      requireStopLoss: limits.requireStopLoss,
    });
    if (verdict.action === 'skip')
      return { ok: false, code: `risk_${verdict.reason.split(':')[0]}`, message: verdict.reason };
    const volume = verdict.action === 'shrink' ? verdict.volume : ctx.volume;
    if (s) this.samples.set(ctx.slave.id, { ...s, openVolume: s.openVolume.plus(volume) });
    return verdict.action === 'shrink' ? { ok: true, volume } : { ok: true };
  };
}

/** Moved to the domain: risk-percent sizing needs the same conversion (re-exported for the risk modules). */
export { quoteToAccount };
